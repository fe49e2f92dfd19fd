package inbox

import (
	"fmt"
	"io"
	"sync"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/internal/fsm"
	"github.com/ibisgo/ibis/internal/wake"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/serialization"
)

const (
	// inboxChunk is the smallest buffer an inbox allocates for pushed bytes.
	inboxChunk = 4 << 10
	// InboxHighWater is how many unread bytes an inbox holds before Push asks the
	// transport to stop reading the connection; it resumes once the reader has taken
	// it below InboxLowWater. PortHighWater bounds the unread bytes of all the inboxes
	// of one port: past it, every inbox that pushes more is parked, and once the port
	// is below PortLowWater the parked ones are resumed oldest first, as many as the
	// budget has room for (Queue.unpark). Only an inbox whose next message can start
	// (or that is being read) is paused, so a paused inbox is always on its way to
	// being drained. How the transport stops reading a socket is its own business.
	InboxHighWater = 1 << 20
	InboxLowWater  = 256 << 10
	PortHighWater  = core.PortHighWater
	PortLowWater   = 2 << 20
)

// Inbox is the receive side of a pushed connection. The transport calls Push with
// bytes as they arrive and End when the connection ends; the receive port reads them.
//
// Locks: mu is a leaf: the queue, the connection's retirement and the transport's
// resume function are reached only once it is released.
type Inbox struct {
	q *Queue
	c conn // the accepted connection (a *core.Acceptance)

	mu     sync.Mutex
	chunks []chunk // unread bytes, oldest first; chunks[0].b[off:] is next
	off    int
	n      int        // unread bytes in all chunks
	state  inboxState // who has the inbox (see inboxMoves)
	flow   inboxFlow  // whether the transport reads the connection (see flowMoves)
	// ended: End was called, nothing follows the buffered bytes. It is the
	// source's state, apart from state and flow: an ended inbox is still queued
	// and read until the port has taken what it buffered.
	ended  bool
	endErr error // why it ended (nil: the peer closed the socket)
	wake   chan struct{}

	// scan follows the stream ahead of the reader, packet by packet, with the
	// reader's header checks: its Err is the sender's goodbye or the point where the
	// stream broke (nothing valid follows).
	scan   serialization.Scanner
	starts int // messages not yet read whose start can be read without waiting
	// tail is the message the scan is in, not yet counted in starts: on a many-to-one
	// port one of at most WholeMessageLimit bytes counts once it is whole
	// (core.WholeMessageLimit has the rule).
	tail tailScan

	// post is the slice of a reader that waits for a large read with nothing
	// buffered (posted.go): the next bytes of the stream go straight into it,
	// postN of them so far. nil when no read is posted.
	post  []byte
	postN int

	resume func()
}

// inboxState is who has an inbox: nobody (it waits for the start of its next
// message), the port's queue, a receiver, or nobody for good.
//
//	idle    --its next message can start (stepLocked)--------------> queued
//	idle    --its end, goodbye or bad bytes come next (stepLocked)--> retired
//	queued  --a receiver takes it (Queue.pop)-----------------------> owned
//	owned   --the receiver finished the message (released)----------> idle
//	owned   --the message failed or could not start (retire)--------> retired
//	retired --retire, after stepLocked retired it (take1)-----------> retired
//
// stepLocked, which Push, End and released call, moves only an idle inbox: a queued
// or owned one belongs to the port's receivers, which alone move it on, so an inbox
// is never read by two goroutines nor dropped under its reader.
type inboxState uint8

// The states of an inbox.
const (
	inboxIdle    inboxState = iota // no message to start yet: the inbox waits for bytes
	inboxQueued                    // on the port's queue: its next message can start
	inboxOwned                     // a receiver reads a message of it
	inboxRetired                   // the port dropped the connection: nothing more to do
	numInboxStates
)

// inboxMoves lists the legal moves of an inbox's state: inboxMoves[from][to].
var inboxMoves = [numInboxStates][numInboxStates]bool{
	inboxIdle:    {inboxQueued: true, inboxRetired: true},
	inboxQueued:  {inboxOwned: true},
	inboxOwned:   {inboxIdle: true, inboxRetired: true},
	inboxRetired: {inboxRetired: true},
}

// inboxStateNames name the states, for logs and panics.
var inboxStateNames = [numInboxStates]string{"idle", "queued", "owned", "retired"}

func (s inboxState) String() string { return fsm.Name(inboxStateNames[:], s, "inboxState") }

// CanMove reports whether inboxMoves has the move from s to next.
func (s inboxState) CanMove(next inboxState) bool { return inboxMoves[s][next] }

// to moves the inbox to state s; b.mu is held.
func (b *Inbox) to(s inboxState) { move(b, "state", &b.state, s) }

// move sets *cur to next; b.mu is held. A move the table does not list is a bug in
// the inbox's bookkeeping (it could read a connection from two goroutines, lose one,
// or never resume one). It is logged at DPanic level, which panics under a development
// logger (tests) and only logs under a production one, so that a program's receive
// port does not bring its process down; the move is made, as before the table.
func move[S interface {
	fsm.State[S]
	fmt.Stringer
}](b *Inbox, what string, cur *S, next S) {
	if from := *cur; !fsm.Move(cur, next) {
		b.c.Logger().DPanic("inbox moves where its table has no arrow", zap.String("what", what),
			zap.Stringer("from", from), zap.Stringer("to", next), zap.Stringer("from_sender", b.c.From()))
		*cur = next
	}
}

// inboxFlow is whether the transport reads an inbox's connection: flow control, apart
// from inboxState because the two change on different events and combine freely: a
// queued or an owned inbox may be read, paused or parked, and a paused one moves
// between the pending list and its receiver without being resumed (it is resumed by
// what its reader drains).
//
//	on     --Push: the inbox holds InboxHighWater---------------> paused
//	on     --Push: the port holds PortHighWater (park)----------> parked
//	paused --Push: the port holds PortHighWater (park)----------> parked
//	paused --Read: drained below InboxLowWater------------------> on
//	paused --released: no message left to start-----------------> on
//	parked --unpark, or its reader is about to wait (Read),
//	         or no message left to start (released)--------------> on
//	parked --retire: the port no longer resumes it--------------> paused
//
// Only an inbox whose next message can start, or that is being read, is paused (see
// InboxHighWater), so a paused inbox is always on its way to being drained.
type inboxFlow uint8

// The flows of an inbox.
const (
	flowOn     inboxFlow = iota // the transport reads the connection
	flowPaused                  // Push reported the inbox full: the transport waits for resume
	flowParked                  // paused for the port's budget: on the port's parked list too
	numInboxFlows
)

// flowMoves lists the legal moves of an inbox's flow: flowMoves[from][to].
var flowMoves = [numInboxFlows][numInboxFlows]bool{
	flowOn:     {flowPaused: true, flowParked: true},
	flowPaused: {flowOn: true, flowParked: true},
	flowParked: {flowOn: true, flowPaused: true},
}

// inboxFlowNames name the flows, for logs and panics.
var inboxFlowNames = [numInboxFlows]string{"on", "paused", "parked"}

func (f inboxFlow) String() string { return fsm.Name(inboxFlowNames[:], f, "inboxFlow") }

// CanMove reports whether flowMoves has the move from f to next.
func (f inboxFlow) CanMove(next inboxFlow) bool { return flowMoves[f][next] }

// flowTo moves the inbox's flow to f; b.mu is held.
func (b *Inbox) flowTo(f inboxFlow) { move(b, "flow", &b.flow, f) }

// resumed takes the inbox out of a pause or park; b.mu is held. It returns the
// function that tells the transport to read again, for the caller to call without
// the lock.
func (b *Inbox) resumed() func() {
	b.flowTo(flowOn)
	return b.resume
}

// conn is what an inbox uses of its accepted connection: core.Acceptance's hooks for a
// transport's own source.
type conn interface {
	Progress()
	CutErr() error
	Retire(err error)
	Closed() <-chan struct{}
	Port() ipl.ReceivePortIdentifier
	From() ipl.SendPortIdentifier
	Logger() *zap.Logger
}

// New hands an accepted connection of a port whose source is a Queue (NewQueue) over
// to a new inbox and returns it; the transport then calls Push and End. resume, when
// not nil, is called (without locks held) after Push reported the inbox full and the
// reader has since drained it below InboxLowWater. It returns nil when the port has no
// Queue (the connection was dropped).
func New(acc *core.Acceptance, resume func()) *Inbox {
	q, ok := acc.Source().(*Queue)
	if !ok {
		acc.Abort(fmt.Errorf("%w: receive port %s reads no inboxes", ipl.ErrUnsupported, acc.Port()))
		return nil
	}
	b := newInbox(q, acc, resume, acc.MaxMessageSize())
	acc.Deliver(b, b)
	return b
}

// newInbox makes an inbox of q for c whose scan stops where the port's reader does.
func newInbox(q *Queue, c conn, resume func(), maxMessage int64) *Inbox {
	return &Inbox{q: q, c: c, wake: make(chan struct{}, 1), resume: resume,
		scan: serialization.NewScanner(serialization.WithReaderMaxMessageSize(maxMessage))}
}

// Push hands the inbox bytes read from the connection; it copies them, so the caller
// may reuse p at once. It reports whether the inbox is full: the transport should then
// stop reading the connection until the resume function is called. Bytes pushed after
// End are dropped.
func (b *Inbox) Push(p []byte) (full bool) { return b.push(p, nil) }

// push is Push; with adopt set, p is part of that buffer of FillFrom's (which nobody
// else writes), and the inbox keeps p itself as a chunk instead of a copy.
func (b *Inbox) push(p []byte, adopt *fillBuf) (full bool) {
	if len(p) == 0 {
		return false
	}
	b.mu.Lock()
	if b.ended || b.state == inboxRetired {
		// Bytes the event loop read before the connection's close took effect.
		b.mu.Unlock()
		return false
	}
	if b.post != nil {
		// A posted read comes first: it was posted with nothing buffered.
		k, done := b.fillPosted(p)
		if p = p[k:]; len(p) == 0 {
			b.mu.Unlock()
			if done {
				wake.Poke(b.wake)
			}
			return false
		}
	}
	if adopt != nil {
		adopt.refs.Add(1)
		b.chunks = append(b.chunks, chunk{b: p, buf: adopt})
		b.n += len(p)
	} else {
		b.store(p)
	}
	b.scanPushed(p)
	b.c.Progress()
	total := b.q.buffered.Add(int64(len(p)))
	park := false
	if b.starts > 0 || b.state == inboxOwned {
		switch {
		case b.n >= InboxHighWater:
			full = true
			if b.flow == flowOn {
				b.flowTo(flowPaused)
			}
		case total >= PortHighWater && b.flow != flowParked:
			full, park = true, true
			b.flowTo(flowParked)
		}
	}
	step, why := b.stepLocked()
	b.mu.Unlock()
	if park {
		b.q.park(b)
	}
	b.take1(step, why)
	return full
}

// End tells the inbox that the connection ended; err is nil for a plain end of stream.
// The port reads what is still buffered first.
func (b *Inbox) End(err error) {
	if cut := b.cutErr(); cut != nil {
		err = cut // the stall watchdog cut the connection: its reason, not the socket's end
	}
	b.mu.Lock()
	if b.ended {
		b.mu.Unlock()
		return
	}
	b.ended, b.endErr = true, err
	step, why := b.stepLocked()
	b.mu.Unlock()
	b.take1(step, why)
}

// chunk is a part of the bytes an inbox holds: a copy of its own, or a part of a
// buffer FillFrom read the socket into (buf), which goes back to its pool once every
// chunk of it has been read.
type chunk struct {
	b   []byte
	buf *fillBuf
}

// store appends a copy of p to the chunks.
func (b *Inbox) store(p []byte) {
	if k := len(b.chunks); k > 0 {
		last := &b.chunks[k-1]
		if last.buf == nil && cap(last.b)-len(last.b) >= len(p) {
			last.b = append(last.b, p...)
			b.n += len(p)
			return
		}
	}
	var c []byte
	if len(p) <= inboxChunk {
		c = chunkPool.Get().(*[inboxChunk]byte)[:len(p)]
	} else {
		c = make([]byte, len(p))
	}
	copy(c, p)
	b.chunks = append(b.chunks, chunk{b: c})
	b.n += len(p)
}

// chunkPool holds the inboxChunk buffers of chunks that have been read, so that a
// connection that brings a small message at a time reuses one instead of allocating
// one per message; an idle inbox holds none.
var chunkPool = sync.Pool{New: func() any { return new([inboxChunk]byte) }}

// free gives back what a chunk that has been read or dropped holds: its part of a fill
// buffer, or its own buffer to chunkPool when it is one of inboxChunk bytes.
func (c chunk) free() {
	if c.buf != nil {
		c.buf.release()
		return
	}
	if cap(c.b) == inboxChunk {
		chunkPool.Put((*[inboxChunk]byte)(c.b[:inboxChunk]))
	}
}

// tailScan is what the scan knows of the message it is in.
type tailScan struct {
	bytes   int  // its bytes scanned so far
	begun   bool // it could be started: its first packet (or bulk header) is whole
	counted bool // it is counted in starts
}

// scanPushed follows the packet structure of the newly pushed bytes with the reader's header
// checks (serialization.Scanner), so that a connection whose next message is bad is
// retired at once, as a reader goroutine would, and counts the messages that can start:
// on a many-to-one port, whole first (see WholeMessageLimit); on other ports, at their
// first packet.
func (b *Inbox) scanPushed(p []byte) {
	t := &b.tail
	for len(p) > 0 && b.scan.Err() == nil {
		n, ev := b.scan.Feed(p)
		p = p[n:]
		t.bytes += n
		if ev&serialization.ScanStart != 0 {
			t.begun = true
		}
		if t.begun && !t.counted && (ev&serialization.ScanEnd != 0 || !b.q.manyToOne ||
			t.bytes > core.WholeMessageLimit || b.q.buffered.Load() >= PortHighWater) {
			b.starts++
			t.counted = true
		}
		if ev&serialization.ScanEnd != 0 {
			*t = tailScan{}
		}
	}
}

// inboxStep is what an inbox needs after a change.
type inboxStep int

// Steps an inbox can need after a change.
const (
	stepNone   inboxStep = iota
	stepQueue            // its next message can start: on the port's queue
	stepRetire           // its next item is its end: the port drops the connection now
)

// stepLocked decides what the inbox needs now. A message that can start queues it;
// with none, an end that comes next (the sender's goodbye, bytes that cannot be
// valid, the socket's end) retires the connection at once, without waiting for a
// receiver, as a connection's reader goroutine would.
func (b *Inbox) stepLocked() (inboxStep, error) {
	if b.state != inboxIdle {
		return stepNone, nil
	}
	if b.starts > 0 {
		b.to(inboxQueued)
		return stepQueue, nil
	}
	var why error
	switch {
	case b.scan.Err() != nil:
		// The sender's goodbye (ErrClosedByPeer itself) or bytes no reader accepts.
		why = b.scan.Err()
	case b.ended && b.endErr != nil:
		why = b.endErr
	case b.ended && b.n > 0:
		why = fmt.Errorf("%w: the connection ended inside a message", serialization.ErrCorrupt)
	case b.ended:
		why = fmt.Errorf("the sender went away without closing its port: %w", io.EOF)
	default:
		return stepNone, nil
	}
	b.to(inboxRetired)
	return stepRetire, why
}

// take1 carries out a step outside the inbox's lock.
func (b *Inbox) take1(step inboxStep, why error) {
	switch step {
	case stepQueue:
		b.q.pending.Push(b)
	case stepRetire:
		b.retire(why)
	}
	wake.Poke(b.wake)
}

// Read gives the port's reader the buffered bytes, waiting for more while the
// connection lives. It is only called by the goroutine that owns the inbox.
func (b *Inbox) Read(p []byte) (int, error) {
	for {
		b.mu.Lock()
		if b.n > 0 {
			n := b.take(p)
			var resume func()
			if b.flow == flowPaused && b.n < InboxLowWater {
				resume = b.resumed()
			}
			// All taken and a large part still to come: it comes straight into p.
			posted, unpark := b.postLocked(p[n:])
			b.mu.Unlock()
			if resume != nil {
				resume()
			}
			if unpark != nil {
				unpark()
			}
			if q := b.q; q.nParked.Load() > 0 && q.buffered.Load() < PortLowWater {
				q.unpark()
			}
			if posted {
				m, err := b.awaitPosted()
				return n + m, err
			}
			return n, nil
		}
		if b.ended {
			err := b.endErr
			b.mu.Unlock()
			if err == nil {
				err = io.EOF
			}
			return 0, err
		}
		// About to wait for bytes: a connection parked for the port's budget must
		// be read again now, whatever the port holds, or nothing would come.
		var resume func()
		if b.flow == flowParked {
			resume = b.resumed()
		}
		posted, _ := b.postLocked(p)
		b.mu.Unlock()
		if resume != nil {
			resume()
		}
		if posted {
			n, err := b.awaitPosted()
			if n > 0 || err != nil {
				return n, err
			}
			continue // the connection ended before a byte came: say so as above
		}
		select {
		case <-b.wake:
		case <-b.c.Closed():
			return 0, fmt.Errorf("receive port %s: %w", b.c.Port(), ipl.ErrClosed)
		}
	}
}

// take copies buffered bytes into p and frees the chunks it empties.
func (b *Inbox) take(p []byte) int {
	n := 0
	for n < len(p) && len(b.chunks) > 0 {
		c := b.chunks[0]
		k := copy(p[n:], c.b[b.off:])
		n += k
		b.off += k
		if b.off == len(c.b) {
			c.free()
			b.chunks[0] = chunk{}
			b.chunks = b.chunks[1:]
			b.off = 0
		}
	}
	if len(b.chunks) == 0 {
		b.chunks = nil
	}
	b.n -= n
	b.q.buffered.Add(-int64(n))
	return n
}

// discard drops what the inbox still holds, for a connection the port retires.
func (b *Inbox) discard() {
	b.mu.Lock()
	n := b.n
	for _, c := range b.chunks {
		c.free()
	}
	b.chunks, b.off, b.n = nil, 0, 0
	b.mu.Unlock()
	if n > 0 {
		b.q.buffered.Add(-int64(n))
	}
}

// unparked takes the inbox out of its park; it returns the resume function to call.
func (b *Inbox) unparked() func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.flow != flowParked {
		return nil
	}
	return b.resumed()
}

// released is called when a message of the inbox was finished. It queues the inbox
// again when the next message can start, or retires the connection when its end is
// next.
//
// A paused inbox with no message left to start would never be read again: the bytes
// it holds are the unfinished start of its next message, which only the connection can
// finish. So it is resumed here, whatever the port's budget says, or a port whose
// budget such starts hold would stall for good. Its bytes stay bounded: it is not
// paused again until its next message can start, and an unfinished start is at most
// one packet or, on a many-to-one port, WholeMessageLimit and a push.
func (b *Inbox) released() {
	b.mu.Lock()
	if b.starts > 0 {
		b.starts--
	}
	b.to(inboxIdle)
	var resume func()
	if b.flow != flowOn && b.starts == 0 {
		resume = b.resumed()
	}
	step, why := b.stepLocked()
	b.mu.Unlock()
	if resume != nil {
		resume()
	}
	b.take1(step, why)
}

// Waiting reports, for the stall watchdog, whether the inbox waits for bytes from its
// sender: it holds nothing its port can deliver (or its reader has read all it holds),
// and whether it is inside a message that has begun to arrive. A paused inbox waits for
// nothing: the event loop stopped reading it.
func (b *Inbox) Waiting() (waiting, mid bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.flow != flowOn || b.ended || b.state == inboxRetired {
		return false, false
	}
	mid = b.scan.Mid()
	owned := b.state == inboxOwned
	idle := (owned && b.n == 0) || (!owned && b.starts == 0)
	return mid || idle, mid
}
