package nio

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/ipl"
)

const (
	// queueHighWater bounds the bytes queued on one connection: a sender that gets
	// this far ahead of its receiver waits in WritePacket until the event loop has
	// written the queue down to queueLowWater.
	queueHighWater = 4 << 20
	queueLowWater  = 1 << 20
	// maxIovecs is how many buffers one writev takes (the kernel's IOV_MAX).
	maxIovecs = 1024
	// The event loop writes a connection until the socket is full; it then tries
	// again after retryMin, doubling up to retryMax while the socket stays full. gnet
	// tells a handler nothing about a socket becoming writable, and its own write
	// path would copy our queue into a buffer per connection.
	retryMin = 20 * time.Microsecond
	retryMax = 2 * time.Millisecond
)

// queuedOut is the send side of a nonblocking or thread-flavour connection: packets wait
// in a queue of shared buffers, and the connection's event loop writes them with
// writev when the socket takes them.
type queuedOut struct {
	gc   gnet.Conn
	lost func(error)

	mu       sync.Mutex
	q        []*packet
	off      int // bytes of q[0] already written
	queued   int // bytes in q not yet written
	err      error
	closing  bool // Close was called: the ending is ours, not a loss
	open     bool // gnet registered the connection (OnOpen ran)
	flushing bool // a flush is scheduled on the event loop
	writing  bool // a writev is reading the head of q: fail leaves q to the flush
	dropped  bool // fail came with bytes still queued: they never reached the socket
	retry    time.Duration
	timer    *time.Timer
	changed  chan struct{} // closed and replaced whenever queued or err changes
	// wfd is a duplicate of the socket's descriptor for the sender's own writes
	// (direct.go), -1 when there is none or once fail closed it. Being ours, it cannot
	// be closed and reused under a write by the event loop's close.
	wfd int
}

var (
	_ core.OutConn = (*queuedOut)(nil)
	_ core.Sharer  = (*queuedOut)(nil)
	_ core.Drainer = (*queuedOut)(nil)
)

func newQueuedOut(lost func(error), wfd int) *queuedOut {
	return &queuedOut{lost: lost, changed: make(chan struct{}), wfd: wfd}
}

// Share copies a packet once for all the connections of a multicast.
func (o *queuedOut) Share(bufs net.Buffers) core.SharedPacket { return newPacket(bufs) }

// WritePacket queues a copy of bufs (core hands a queueing connection its packets
// through Share and WriteShared; this is the plain OutConn path).
func (o *queuedOut) WritePacket(bufs net.Buffers) error {
	p := newPacket(bufs)
	defer p.Release()
	return o.WriteShared(p)
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
		o.flushing = true
		o.mu.Unlock()
		o.schedule()
		return nil
	}
	for o.err == nil && o.queued >= queueHighWater {
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
	start := !o.flushing
	o.flushing = true
	o.mu.Unlock()
	if start {
		o.schedule()
	}
}

// schedule runs a flush on the connection's event loop.
func (o *queuedOut) schedule() {
	err := o.gc.EventLoop().Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		o.flush()
		return nil
	}))
	if err != nil {
		o.fail(fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err))
	}
}

// flush writes as much of the queue as the socket takes. It runs on the event loop,
// which is also where gnet closes the connection: once closed has run, err is set and
// the descriptor is never touched again.
func (o *queuedOut) flush() {
	var iov [][]byte
	for {
		o.mu.Lock()
		if o.err != nil || !o.open || len(o.q) == 0 {
			o.flushing = false
			o.mu.Unlock()
			return
		}
		iov = iov[:0]
		iov = append(iov, o.q[0].b[o.off:])
		for _, p := range o.q[1:min(len(o.q), maxIovecs)] {
			iov = append(iov, p.b)
		}
		o.writing = true
		o.mu.Unlock()
		n, err := unix.Writev(o.gc.Fd(), iov)
		clear(iov)
		o.mu.Lock()
		o.writing = false
		if o.err != nil {
			// Failed while the write ran: the packets are ours to release.
			o.dropQueue()
			o.flushing = false
			o.mu.Unlock()
			return
		}
		if err != nil && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			o.mu.Unlock()
			o.fail(fmt.Errorf("%w: writing: %w", ipl.ErrConnectionLost, err))
			_ = o.gc.Close()
			return
		}
		full := n <= 0 || err != nil
		if n > 0 {
			o.advance(n)
		}
		if full && len(o.q) > 0 && o.err == nil {
			// The socket is full: try again later, on the event loop again.
			if o.retry < retryMin {
				o.retry = retryMin
			}
			d := o.retry
			o.retry = min(2*o.retry, retryMax)
			o.timer = time.AfterFunc(d, o.schedule)
			o.mu.Unlock()
			return
		}
		o.retry = 0
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

// fail ends the connection's queue with err and frees what was still queued.
func (o *queuedOut) fail(err error) {
	o.mu.Lock()
	if o.err != nil {
		o.mu.Unlock()
		return
	}
	o.err = err
	o.dropped = o.queued > 0
	if !o.writing {
		o.dropQueue()
	}
	o.closeWFD()
	o.queued = 0
	if o.timer != nil {
		o.timer.Stop()
	}
	ours := o.closing
	o.broadcast()
	o.mu.Unlock()
	if !ours {
		o.lost(err)
	}
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
	for o.queued > 0 && o.err == nil {
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
	o.mu.Lock()
	o.closing = true
	o.mu.Unlock()
	o.fail(fmt.Errorf("%w: connection closed", ipl.ErrClosed))
	return o.gc.Close()
}

// traffic: a receiver never writes after the handshake, so bytes from it are a fault.
func (o *queuedOut) traffic(c gnet.Conn) gnet.Action {
	_, _ = c.Discard(-1)
	o.fail(fmt.Errorf("%w: the receiver sent unexpected data", ipl.ErrConnectionLost))
	return gnet.Close
}

// opened runs on the event loop once gnet has registered the connection.
func (o *queuedOut) opened(c gnet.Conn) {
	o.mu.Lock()
	o.gc, o.open = c, true
	o.mu.Unlock()
}

func (o *queuedOut) isOpen() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.open
}

func (o *queuedOut) closed(_ gnet.Conn, err error) {
	o.mu.Lock()
	o.open = false
	o.mu.Unlock()
	if err == nil {
		err = errors.New("closed")
	}
	o.fail(fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err))
}
