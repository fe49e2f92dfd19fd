package core

import (
	"fmt"
	"io"
	"sync"

	"github.com/ibisgo/ibis/internal/wake"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/serialization"
)

// Push-mode connections: an event loop reads the socket and pushes the bytes into the
// connection's Inbox; no goroutine waits on the connection. The receive port keeps a
// FIFO of inboxes whose next message can be started without waiting (its first packet
// is whole, or is a bulk packet whose body the reader streams), and whoever receives
// takes the next inbox from it (pending.go); a connection whose end, goodbye or invalid
// bytes come next is retired by the event loop at once. So a
// Receive never scans the connections, a sender that stalls halfway through the start
// of a message holds up nobody, and a thousand idle senders cost a thousand small
// structs, not a thousand goroutines and read buffers.

const (
	// inboxChunk is the smallest buffer an inbox allocates for pushed bytes.
	inboxChunk = 4 << 10
	// InboxHighWater is how many unread bytes an inbox holds before Push asks the
	// transport to stop reading the connection; it resumes once the reader has taken
	// it below InboxLowWater. PortHighWater bounds the unread bytes of all the inboxes
	// of one port: past it, every inbox that pushes more is parked, and the parked
	// ones resume together once the port is below PortLowWater. Only an inbox whose
	// next message can start (or that is being read) is paused, so a paused inbox is
	// always on its way to being drained.
	InboxHighWater = 1 << 20
	InboxLowWater  = 256 << 10
	PortHighWater  = 4 << 20
	PortLowWater   = 2 << 20
)

// Inbox is the receive side of a push-mode connection. The transport calls Push with
// bytes as they arrive and End when the connection ends; the receive port reads them.
type Inbox struct {
	port *ReceivePort
	ic   *inConn

	mu      sync.Mutex
	chunks  [][]byte // unread bytes, oldest first; chunks[0][off:] is next
	off     int
	n       int   // unread bytes in all chunks
	ended   bool  // End was called: nothing follows the buffered bytes
	endErr  error // why it ended (nil: the peer closed the socket)
	owned   bool  // a receiver is reading a message of this inbox
	queued  bool  // on the port's pending list
	retired bool  // handed to the port as ended (or broken): nothing more to do
	wake    chan struct{}

	// The scan of the stream ahead of the reader, packet by packet.
	hdr     [serialization.HeaderSize]byte
	hdrN    int   // bytes of the next header seen so far
	skip    int64 // bytes of the current packet's body still to come
	inMsg   bool  // the scan is inside a message (the next packet is not a first one)
	first   bool  // the current packet is the first of its message
	counted bool  // the current first packet was counted as startable at its header
	starts  int   // messages not yet read whose start can be read without waiting
	msgSize int64 // bytes of the message the scan is in
	bad     error // the stream broke at the scan's position (no valid packet follows)
	goodbye bool  // the scan met the sender's close packet: nothing follows it

	maxMsg int64 // the message size limit the reader applies

	paused bool // Push asked the transport to stop reading
	parked bool // ... because of the port's budget: the port resumes it
	resume func()
}

// Inbox switches an accepted connection to push mode and returns its inbox; the
// transport then calls Push and End instead of Serve. resume, when not nil, is called
// (without locks held) after Push reported the inbox full and the reader has since
// drained it below InboxLowWater.
func (a *Acceptance) Inbox(resume func()) *Inbox {
	p := a.port
	b := &Inbox{port: p, ic: a.ic, wake: make(chan struct{}, 1), resume: resume}
	a.ic.rd = serialization.NewReader(p.kind, b, serialization.WithReaderMaxMessageSize(p.in.cfg.MaxMessageSize))
	b.maxMsg = p.in.cfg.MaxMessageSize
	a.ic.setDelivery(b)
	return b
}

// Push hands the inbox bytes read from the connection; it copies them, so the caller
// may reuse p at once. It reports whether the inbox is full: the transport should then
// stop reading the connection until the resume function is called. Bytes pushed after
// End are dropped.
func (b *Inbox) Push(p []byte) (full bool) {
	if len(p) == 0 {
		return false
	}
	b.mu.Lock()
	if b.ended || b.retired {
		// Bytes the event loop read before the connection's close took effect.
		b.mu.Unlock()
		return false
	}
	b.store(p)
	b.scan(p)
	b.ic.watch.progress.Add(1)
	total := b.port.push.buffered.Add(int64(len(p)))
	park := false
	if b.starts > 0 || b.owned {
		switch {
		case b.n >= InboxHighWater:
			full, b.paused = true, true
		case total >= PortHighWater && !b.parked:
			full, b.paused, b.parked, park = true, true, true, true
		}
	}
	step, why := b.stepLocked()
	b.mu.Unlock()
	if park {
		b.port.park(b)
	}
	b.take1(step, why)
	return full
}

// End tells the inbox that the connection ended; err is nil for a plain end of stream.
// The port reads what is still buffered first.
func (b *Inbox) End(err error) {
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

// store appends a copy of p to the chunks.
func (b *Inbox) store(p []byte) {
	if k := len(b.chunks); k > 0 {
		last := b.chunks[k-1]
		if cap(last)-len(last) >= len(p) {
			b.chunks[k-1] = append(last, p...)
			b.n += len(p)
			return
		}
	}
	c := make([]byte, len(p), max(len(p), inboxChunk))
	copy(c, p)
	b.chunks = append(b.chunks, c)
	b.n += len(p)
}

// scan follows the packet structure of the newly pushed bytes. It checks what the
// reader would refuse at a packet's header (see Reader.parse), so that a connection
// whose next message is bad is retired at once, as a reader goroutine would.
func (b *Inbox) scan(p []byte) {
	for len(p) > 0 && b.bad == nil && !b.goodbye {
		if b.skip > 0 {
			k := int64(len(p))
			if k > b.skip {
				k = b.skip
			}
			b.skip -= k
			p = p[k:]
			if b.skip == 0 {
				b.packetDone()
			}
			continue
		}
		k := copy(b.hdr[b.hdrN:], p)
		b.hdrN += k
		p = p[k:]
		if b.hdrN < serialization.HeaderSize {
			return
		}
		b.hdrN = 0
		b.header()
	}
}

// header takes in the packet header in b.hdr.
func (b *Inbox) header() {
	size, flags, ok := serialization.Frame(b.hdr[:])
	switch {
	case !ok:
		b.bad = fmt.Errorf("%w: bytes that are not a packet header", serialization.ErrCorrupt)
		return
	case flags&serialization.FlagClose != 0:
		if b.inMsg {
			b.bad = fmt.Errorf("%w in the middle of a message", serialization.ErrClosedByPeer)
		} else {
			b.goodbye = true
		}
		return
	}
	b.first = !b.inMsg
	b.inMsg = flags&serialization.FlagEnd == 0
	if b.first {
		b.msgSize = 0
	}
	b.msgSize += size
	b.skip = size - serialization.HeaderSize
	switch {
	case b.msgSize > b.maxMsg:
		b.bad = fmt.Errorf("%w: %w: a packet takes the message to %d bytes, over the limit of %d bytes",
			serialization.ErrCorrupt, serialization.ErrTooLarge, b.msgSize, b.maxMsg)
		return
	case flags&serialization.FlagBulk == 0 && b.skip > serialization.DefaultReaderMaxPacketSize:
		b.bad = fmt.Errorf("%w: %w: packet body of %d bytes exceeds the maximum packet size of %d bytes",
			serialization.ErrCorrupt, serialization.ErrTooLarge, b.skip, serialization.DefaultReaderMaxPacketSize)
		return
	}
	// The reader does not wait for the body of a bulk packet.
	b.counted = b.first && flags&serialization.FlagBulk != 0
	if b.counted {
		b.starts++
	}
	if b.skip == 0 {
		b.packetDone()
	}
}

// packetDone notes that the current packet is whole.
func (b *Inbox) packetDone() {
	if b.first && !b.counted {
		b.starts++
	}
}

// inboxStep is what an inbox needs after a change.
type inboxStep int

// Steps an inbox can need after a change.
const (
	stepNone   inboxStep = iota
	stepQueue            // its next message can start: on the port's pending list
	stepRetire           // its next item is its end: the port drops the connection now
)

// stepLocked decides what the inbox needs now. A message that can start queues it;
// with none, an end that comes next (the sender's goodbye, bytes that cannot be
// valid, the socket's end) retires the connection at once, without waiting for a
// receiver, as a connection's reader goroutine would.
func (b *Inbox) stepLocked() (inboxStep, error) {
	if b.owned || b.queued || b.retired {
		return stepNone, nil
	}
	if b.starts > 0 {
		b.queued = true
		return stepQueue, nil
	}
	var why error
	switch {
	case b.bad != nil:
		why = b.bad
	case b.goodbye:
		why = serialization.ErrClosedByPeer
	case b.ended && b.endErr != nil:
		why = b.endErr
	case b.ended && b.n > 0:
		why = fmt.Errorf("%w: the connection ended inside a message", serialization.ErrCorrupt)
	case b.ended:
		why = fmt.Errorf("the sender went away without closing its port: %w", io.EOF)
	default:
		return stepNone, nil
	}
	b.retired = true
	return stepRetire, why
}

// take1 carries out a step outside the inbox's lock.
func (b *Inbox) take1(step inboxStep, why error) {
	switch step {
	case stepQueue:
		b.port.enqueueInbox(b)
	case stepRetire:
		b.port.retireInbox(b, why)
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
			if b.paused && !b.parked && b.n < InboxLowWater {
				b.paused = false
				resume = b.resume
			}
			b.mu.Unlock()
			if resume != nil {
				resume()
			}
			if q := &b.port.push; q.nParked.Load() > 0 && q.buffered.Load() < PortLowWater {
				b.port.unpark()
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
		if b.parked {
			b.parked, b.paused = false, false
			resume = b.resume
		}
		b.mu.Unlock()
		if resume != nil {
			resume()
		}
		select {
		case <-b.wake:
		case <-b.port.closed:
			return 0, fmt.Errorf("receive port %s: %w", b.port.id, ipl.ErrClosed)
		}
	}
}

// take copies buffered bytes into p and frees the chunks it empties.
func (b *Inbox) take(p []byte) int {
	n := 0
	for n < len(p) && len(b.chunks) > 0 {
		c := b.chunks[0]
		k := copy(p[n:], c[b.off:])
		n += k
		b.off += k
		if b.off == len(c) {
			b.chunks[0] = nil
			b.chunks = b.chunks[1:]
			b.off = 0
		}
	}
	if len(b.chunks) == 0 {
		b.chunks = nil
	}
	b.n -= n
	b.port.push.buffered.Add(-int64(n))
	return n
}

// discard drops what the inbox still holds, for a connection the port retires.
func (b *Inbox) discard() {
	b.mu.Lock()
	n := b.n
	b.chunks, b.off, b.n = nil, 0, 0
	b.mu.Unlock()
	if n > 0 {
		b.port.push.buffered.Add(-int64(n))
	}
}

// unparked takes the inbox out of its park; it returns the resume function to call.
func (b *Inbox) unparked() func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.parked {
		return nil
	}
	b.parked, b.paused = false, false
	return b.resume
}

// released is called when a message of the inbox was finished. It queues the inbox
// again when the next message can start, or retires the connection when its end is
// next.
//
// A paused inbox with no message left to start would never be read again: the bytes
// it holds are the unfinished start of its next message, and only the connection can
// finish it. It is resumed here, whatever the port's budget says; otherwise a port
// whose budget is held by such starts stalls for good (a hundred senders of 56 KB
// messages did). Its bytes stay bounded: until its next message can start it is not
// paused again, and an unfinished start is at most one packet.
func (b *Inbox) released() {
	b.mu.Lock()
	if b.starts > 0 {
		b.starts--
	}
	b.owned = false
	var resume func()
	if b.paused && b.starts == 0 {
		b.paused, b.parked = false, false
		resume = b.resume
	}
	step, why := b.stepLocked()
	b.mu.Unlock()
	if resume != nil {
		resume()
	}
	b.take1(step, why)
}

// waiting reports, for the stall watchdog, whether the inbox waits for bytes from its
// sender: it holds nothing its port can deliver (or its reader has read all it holds),
// and whether it is inside a message that has begun to arrive. A paused inbox waits for
// nothing: the event loop stopped reading it.
func (b *Inbox) waiting() (waiting, mid bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.paused || b.ended || b.retired {
		return false, false
	}
	mid = b.hdrN > 0 || b.skip > 0 || b.inMsg
	idle := (b.owned && b.n == 0) || (!b.owned && b.starts == 0)
	return mid || idle, mid
}
