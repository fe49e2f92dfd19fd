package nio

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/impl/internal/sockets"
	"github.com/ibisgo/ibis/internal/fsm"
	"github.com/ibisgo/ibis/ipl"
)

const (
	// queueHighWater bounds the bytes queued on one connection: a sender that gets
	// this far ahead of its receiver waits in WritePacket until the event loop has
	// written the queue below it again.
	queueHighWater = 4 << 20
	// maxIovecs is how many buffers one writev takes (the kernel's IOV_MAX).
	maxIovecs = 1024
)

// queuedOut is the send side of a nonblocking or thread-flavour connection: packets wait
// in a queue of shared buffers, and the connection's event loop writes them with
// writev when the socket takes them.
//
// Core hands the connection each packet in pieces of at most 1 MiB. While nothing is
// queued the sender writes the piece itself (direct.go); what the socket does not
// take, and every piece that finds a queue, is copied once into a pooled,
// reference-counted buffer (packet.go), and a multicast queues that same buffer on
// every connection (core.Sharer, WriteShared). The event loop writes the queue on
// gnet's descriptor, not through gnet's write path (descriptor.go says why); a full
// socket is waited on (descriptor.go). A sender queueHighWater ahead waits in
// WritePacket. Finish drains the queues (core.Drainer), so a finished message is in
// the kernel, and bytes dropped because the connection broke make Drain fail. A clean
// disconnect drains its goodbye; a cut (Close after a loss, a dead peer) drops the
// queue at once. A connection whose registration gnet refused (no OnOpen) is never
// written.
//
// Its life is an outState, changed only through to; what the flush does is a
// flushState of its own (a flush scheduled before the end still runs once and finds
// the end).
//
// Lock order: o.mu is a leaf. The event loop takes it (flush, opened, closed) and so do
// senders and the waits of descriptor.go, but no one holds it while waiting for another
// goroutine or calling core (lost): the direct write under it is a non-blocking
// write, and gnet's Execute only queues a task.
type queuedOut struct {
	gc   gnet.Conn
	eng  *engine
	lost func(error)

	mu       sync.Mutex
	state    outState
	flushing flushState
	q        []*packet
	off      int   // bytes of q[0] already written
	queued   int   // bytes in q not yet written
	err      error // why the queue ended; set exactly when state is outEnded or outReleased
	// dropped records, at the end, that bytes were still queued: they never reached
	// the socket, so Drain fails. A fact about how the queue ended, read only once it
	// has (it would double the ended states if it were one).
	dropped bool
	changed chan struct{} // closed and replaced whenever queued or err changes
	// fd is gnet's descriptor of the socket, set by opened. gnet closes it only after
	// its OnClose (closed), which takes o.mu: whoever holds o.mu while the connection
	// is open may write it (direct.go) or ask it (Pending).
	fd    int
	watch *watch // what a full socket is waited on (descriptor.go), made when first needed
	// ours: Close ended the connection; a later end read from the receiver is not
	// reported (lost hears nothing after Close).
	ours bool
}

// outState is where a queued connection is in its life:
//
//	outEnrolling --opened--> outOpen ----end----> outEnded
//	                            |                     |
//	                            |                  closed
//	                            |                     v
//	                            +------closed----> outReleased
//
// States:
//
//   - outEnrolling: handed to gnet, whose OnOpen has not run. Nothing is written:
//     Dial returns the connection only once it is open.
//   - outOpen: gnet registered the connection (opened); packets are written directly
//     or queued and flushed.
//   - outEnded: the queue ended (err set, the queue dropped, lost told unless Close
//     did it) by Close, a failed write, bytes from the receiver or a flush that could
//     not be scheduled; gnet still holds the connection and its OnClose is to come.
//   - outReleased: gnet's OnClose ran (closed): the event loop has let go of the
//     descriptor. Coming from outOpen, it ends the queue as outEnded does.
//
// Every other move is refused by to: a second end, or OnClose after OnClose, changes
// nothing.
type outState uint8

const (
	outEnrolling outState = iota
	outOpen
	outEnded
	outReleased
)

var outStateNames = [...]string{outEnrolling: "enrolling", outOpen: "open", outEnded: "ended", outReleased: "released"}

// String names the state for logs and test failures.
func (s outState) String() string { return fsm.Name(outStateNames[:], s, "outState") }

// CanMove reports whether the diagram at outState has an arrow from s to next.
func (s outState) CanMove(next outState) bool {
	switch s {
	case outEnrolling:
		return next == outOpen
	case outOpen:
		return next == outEnded || next == outReleased
	case outEnded:
		return next == outReleased
	}
	return false
}

// to moves the connection to next if the diagram allows it and reports whether it
// did; o.mu is held.
func (o *queuedOut) to(next outState) bool { return fsm.Move(&o.state, next) }

// registered reports whether gnet holds the connection: OnOpen has run, OnClose not
// yet. o.mu is held.
func (o *queuedOut) registered() bool { return o.state == outOpen || o.state == outEnded }

// flushState is what the event loop's flush of a connection is doing. Its moves:
//
//	flushIdle --packet queued--> flushPending --writev--> flushWriting
//	    ^                         |     ^                       |
//	    +----nothing to write-----+     +------written----------+
//	    +-------------------ended while writing-----------------+
//
// A flush stays pending while it waits for a full socket (descriptor.go). It is apart
// from outState because a flush scheduled while the connection was open still runs
// after the end, and only the flush may release the packets a writev is reading.
type flushState uint8

const (
	flushIdle    flushState = iota // no flush scheduled: the next packet is written directly or schedules one
	flushPending                   // a flush is scheduled, runs, or waits for a full socket
	flushWriting                   // a writev outside o.mu reads the head of q: an end leaves q to the flush
)

var flushStateNames = [...]string{flushIdle: "idle", flushPending: "pending", flushWriting: "writing"}

// String names the flush's state for logs and test failures.
func (f flushState) String() string { return fsm.Name(flushStateNames[:], f, "flushState") }

var (
	_ core.OutConn = (*queuedOut)(nil)
	_ core.Sharer  = (*queuedOut)(nil)
	_ core.Drainer = (*queuedOut)(nil)
)

func newQueuedOut(lost func(error), eng *engine) *queuedOut {
	return &queuedOut{lost: lost, eng: eng, changed: make(chan struct{}), fd: -1}
}

// Share copies a packet once for all the connections of a multicast.
func (o *queuedOut) Share(bufs net.Buffers) core.SharedPacket { return o.copy(bufs) }

// copy copies bufs into a packet of its own.
func (o *queuedOut) copy(bufs net.Buffers) *packet {
	p := newPacket(bufs)
	o.eng.hk.onCopied(len(p.b))
	return p
}

// WritePacket writes bufs, a message's piece for this connection alone (core hands a
// multicast's packets to Share and WriteShared instead). With nothing queued the
// caller writes the bytes itself, without copying them, and only what the socket did
// not take is copied and queued (direct.go); otherwise a copy of bufs is queued.
func (o *queuedOut) WritePacket(bufs net.Buffers) error {
	o.mu.Lock()
	if !o.directOK() {
		o.mu.Unlock()
		p := o.copy(bufs)
		defer p.Release()
		return o.WriteShared(p)
	}
	rest, err := o.writevDirect(bufs)
	if err != nil {
		o.mu.Unlock()
		return o.directFailed(err)
	}
	if len(rest) == 0 {
		o.mu.Unlock()
		return nil
	}
	// The queue is empty and stays so under o.mu: the copy of the rest is its head.
	p := o.copy(rest)
	o.off = 0
	o.q = append(o.q, p) // the queue takes the caller's reference
	o.queued += len(p.b)
	o.flushing = flushPending
	o.mu.Unlock()
	o.schedule()
	return nil
}

// WriteShared queues p, waiting while the connection has too much queued already; with
// nothing queued, the caller writes what the socket takes at once.
func (o *queuedOut) WriteShared(sp core.SharedPacket) error {
	p := sp.(*packet)
	o.mu.Lock()
	if o.directOK() {
		n, err := o.writeDirect(p.b)
		if err != nil {
			o.mu.Unlock()
			return o.directFailed(err)
		}
		if n == len(p.b) {
			o.mu.Unlock()
			return nil
		}
		o.off = n // the queue is empty: p becomes its head
		p.retain()
		o.q = append(o.q, p)
		o.queued += len(p.b) - n
		o.flushing = flushPending
		o.mu.Unlock()
		o.schedule()
		return nil
	}
	for o.state == outOpen && o.queued >= queueHighWater {
		ch := o.changed
		o.mu.Unlock()
		<-ch
		o.mu.Lock()
	}
	if o.err != nil {
		err := o.err
		o.mu.Unlock()
		return err
	}
	p.retain()
	o.enqueue(p)
	return nil
}

// enqueue appends p (whose reference the queue now holds) and starts a flush unless one
// is running; o.mu is held and enqueue unlocks it.
func (o *queuedOut) enqueue(p *packet) {
	o.q = append(o.q, p)
	o.queued += len(p.b)
	start := o.flushing == flushIdle
	o.flushing = flushPending
	o.mu.Unlock()
	if start {
		o.schedule()
	}
}

// schedule runs a flush on the connection's event loop.
func (o *queuedOut) schedule() {
	if err := o.execFlush(); err != nil {
		o.fail(fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err))
	}
}

// execFlush hands a flush to the event loop, which runs it later.
func (o *queuedOut) execFlush() error {
	el := o.gc.EventLoop()
	ls := o.eng.spinOf(el)
	ls.taskQueued()
	err := el.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		ls.taskRan()
		o.flush()
		return nil
	}))
	if err != nil {
		ls.taskRan()
	}
	return err
}

// flush writes as much of the queue as the socket takes. It runs on the event loop,
// which is also where gnet closes the connection: once closed has run, the state is
// outReleased and the descriptor is never touched again.
func (o *queuedOut) flush() {
	var iov [][]byte
	for {
		o.mu.Lock()
		if o.state != outOpen || len(o.q) == 0 {
			o.flushing = flushIdle
			o.mu.Unlock()
			return
		}
		iov = iov[:0]
		iov = append(iov, o.q[0].b[o.off:])
		for _, p := range o.q[1:min(len(o.q), maxIovecs)] {
			iov = append(iov, p.b)
		}
		o.flushing = flushWriting
		o.mu.Unlock()
		n, err := writevFd(o.fd, iov)
		clear(iov)
		o.mu.Lock()
		o.flushing = flushPending // the write is over
		if o.state != outOpen {
			// Ended while the write ran: the packets are ours to release.
			o.dropQueue()
			o.flushing = flushIdle
			o.mu.Unlock()
			return
		}
		if err != nil && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			// The end that follows drops the queue; the flush stays pending until then,
			// so that no packet queued meanwhile schedules another.
			o.mu.Unlock()
			o.fail(fmt.Errorf("%w: writing: %w", ipl.ErrConnectionLost, err))
			if !receiverGone(err) {
				_ = o.gc.Close()
			}
			return
		}
		full := n <= 0 || err != nil
		if n > 0 {
			o.advance(n)
		}
		if full && len(o.q) > 0 {
			// The socket is full: the flush runs again once it takes bytes.
			err := o.awaitWritable()
			o.mu.Unlock()
			if err != nil {
				o.fail(fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err))
				_ = o.gc.Close()
			}
			return
		}
		o.mu.Unlock()
	}
}

// advance drops n written bytes from the head of the queue.
func (o *queuedOut) advance(n int) {
	o.queued -= n
	for n > 0 {
		p := o.q[0]
		left := len(p.b) - o.off
		if n < left {
			o.off += n
			break
		}
		n -= left
		o.off = 0
		o.q[0] = nil
		o.q = o.q[1:]
		p.Release()
	}
	if len(o.q) == 0 {
		o.q = nil
	}
	o.broadcast()
}

func (o *queuedOut) broadcast() {
	close(o.changed)
	o.changed = make(chan struct{})
}

// fail ends the connection's queue with err, which is a loss: lost hears of it.
func (o *queuedOut) fail(err error) { o.end(outEnded, err, false) }

// receiverEnded ends the queue with err, an end read from the receiver's side (its
// cut notice, close or reset). lost hears of it even when the queue had ended before
// (a write that failed first), so that the send port learns what the receiver said.
func (o *queuedOut) receiverEnded(next outState, err error) {
	if o.end(next, err, false) {
		return
	}
	o.mu.Lock()
	ours := o.ours
	o.mu.Unlock()
	if !ours {
		o.lost(err)
	}
}

// end moves the connection to next (outEnded, or outReleased when gnet let go of it)
// and, coming from outOpen, ends its queue with err: what was still queued is freed
// and waiters wake. lost hears of the end unless ours says Close asked for it. It
// reports whether it ended the queue (false: it had ended before).
func (o *queuedOut) end(next outState, err error, ours bool) bool {
	o.mu.Lock()
	o.ours = o.ours || ours
	from := o.state
	if !o.to(next) || from != outOpen {
		o.mu.Unlock() // ended before, or gnet's OnClose after the end
		return false
	}
	o.err = err
	o.dropped = o.queued > 0
	if o.flushing != flushWriting {
		o.dropQueue()
	}
	o.closeWatch()
	o.queued = 0
	o.broadcast()
	o.mu.Unlock()
	if !ours {
		o.lost(err)
	}
	return true
}

// dropQueue releases every queued packet; o.mu is held and no write is reading them.
func (o *queuedOut) dropQueue() {
	for _, p := range o.q {
		p.Release()
	}
	o.q, o.off = nil, 0
}

// Drain waits until everything queued is written; it fails when the connection broke
// before that.
func (o *queuedOut) Drain() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for o.queued > 0 && o.state == outOpen {
		ch := o.changed
		o.mu.Unlock()
		<-ch
		o.mu.Lock()
	}
	if o.dropped {
		return o.err
	}
	return nil
}

// Close cuts the connection at once: what is still queued is dropped. A clean
// disconnect has drained its goodbye before it calls Close.
func (o *queuedOut) Close() error {
	o.end(outEnded, fmt.Errorf("%w: connection closed", ipl.ErrClosed), true)
	return o.gc.Close()
}

// traffic: a receiver writes nothing after the handshake but a cut notice
// (core/cutnotice.go) before it cuts the connection; anything else is a fault. A notice
// whose rest has not arrived yet is waited for (its sender's close ends the wait).
func (o *queuedOut) traffic(c gnet.Conn) gnet.Action {
	b, _ := c.Peek(1)
	if len(b) == 1 && b[0] == 'X' && c.InboundBuffered() < core.CutNoticeSize {
		return gnet.None
	}
	var why error
	if len(b) == 1 && b[0] == 'X' {
		notice, _ := c.Next(core.CutNoticeSize)
		why = core.ParseCutNotice(notice)
	} else if len(b) == 1 {
		why = core.ReadCutNotice(b[0], nil) // says what came instead
	}
	_, _ = c.Discard(-1)
	o.receiverEnded(outEnded, fmt.Errorf("%w: %w: %w", ipl.ErrConnectionLost, core.ErrReceiverEnded, why))
	return gnet.Close
}

// Pending reports how many bytes the receiver wrote that the event loop has not read
// (a cut notice on its way to traffic); core's PendingCounter.
func (o *queuedOut) Pending() (int, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.state != outOpen { // once the queue ended, as before gnet lets go of fd
		return 0, false
	}
	n, err := sockets.FDPending(o.fd)
	return n, err == nil
}

// opened runs on the event loop once gnet has registered the connection.
func (o *queuedOut) opened(c gnet.Conn) {
	o.mu.Lock()
	if o.to(outOpen) {
		o.gc, o.fd = c, c.Fd()
	}
	o.mu.Unlock()
}

func (o *queuedOut) isOpen() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.registered()
}

// closed runs on the event loop when gnet let go of the connection; unless the queue
// ended before, this is a loss.
func (o *queuedOut) closed(_ gnet.Conn, err error) {
	if err == nil {
		err = errors.New("closed")
	}
	o.receiverEnded(outReleased, fmt.Errorf("%w: %w: %w", ipl.ErrConnectionLost, core.ErrReceiverEnded, err))
}
