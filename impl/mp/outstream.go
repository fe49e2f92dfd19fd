//go:build mpi

package mp

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/impl/mp/internal/mpi"
	"github.com/ibisgo/ibis/ipl"
)

// outStream is the dialling side of a connection: the writer's end of the virtual
// stream (tags.go) whose reader's end is the acceptor's inStream, and the core.OutConn
// that Dial returns.
type outStream struct {
	t    *transport
	peer int
	c    uint32 // set under the engine's progress lock before the request is sent
	lost func(error)

	// tiny is the gather buffer of small messages (smallsend.go); only
	// the connection's writer uses it (core never writes to one connection from two
	// goroutines at once).
	tiny []byte

	reply   chan replyMsg
	replied bool // the handshake reply came (under the progress lock); later messages are credit

	// mu guards what follows. Lock order: mu is a leaf. The engine's handler takes it
	// (gone, gotCredit), and no one holds it while waiting for the engine or calling
	// core (lost runs on a goroutine of its own).
	mu       sync.Mutex
	lostErr  error
	closed   bool
	closedCh chan struct{}
	credit   int           // bytes the acceptor can still take (see credit.go)
	creditCh chan struct{} // a writer waiting for credit looks again
	est      atomic.Bool   // the acceptor answered yes
}

type replyMsg struct {
	buf []byte
	err error
}

// Dial sends a handshake request to the rank addr names and waits for its reply.
func (t *transport) Dial(ctx context.Context, addr string, req *core.Request, lost func(error)) (core.OutConn, *core.Reply, error) {
	peer, err := t.parseAddr(addr)
	if err != nil {
		return nil, nil, err
	}
	var frame bytes.Buffer
	frame.Write([]byte{0, 0, 0, 0})
	if err := core.WriteRequest(&frame, req); err != nil {
		return nil, nil, fmt.Errorf("%w: handshake with %s: %w", ipl.ErrRefused, addr, err)
	}
	out := &outStream{
		t: t, peer: peer, lost: lost, reply: make(chan replyMsg, 1), closedCh: make(chan struct{}),
		credit: creditWindow, creditCh: make(chan struct{}, 1),
	}
	if !t.track(nil, out) {
		return nil, nil, fmt.Errorf("mp: dialling %s: %w", addr, ipl.ErrClosed)
	}
	b := frame.Bytes()
	if !t.eng.Do(func(l *mpi.Loop) {
		out.c = t.allocConn(peer)
		t.outByKey[connKey(peer, out.c)] = out
		binary.BigEndian.PutUint32(b, out.c)
		l.Send(peer, tagRequest, b, nil)
	}) {
		t.untrack(nil, out)
		return nil, nil, fmt.Errorf("mp: dialling %s: %w", addr, ipl.ErrClosed)
	}
	var r replyMsg
	unblock := t.eng.Blocking()
	select {
	case r = <-out.reply:
	case <-ctx.Done():
		unblock()
		out.abandon(true)
		return nil, nil, ctx.Err()
	case <-t.closing:
		unblock()
		out.abandon(true)
		return nil, nil, fmt.Errorf("mp: dialling %s: %w", addr, ipl.ErrClosed)
	}
	unblock()
	var rep *core.Reply
	if r.err == nil {
		rep, err = core.ReadReply(bytes.NewReader(r.buf))
	} else {
		err = r.err
	}
	if err != nil {
		out.abandon(true)
		return nil, nil, fmt.Errorf("%w: handshake with %s: %w", ipl.ErrRefused, addr, err)
	}
	if rep.Code != core.ReplyAccepted {
		out.abandon(false)
		return nil, rep, nil
	}
	out.est.Store(true)
	return out, rep, nil
}

// abandon forgets a connection that will not be used; with end set it also sends the
// empty message that ends (or cancels) it at the acceptor.
func (out *outStream) abandon(end bool) {
	t := out.t
	t.untrack(nil, out)
	t.eng.Do(func(l *mpi.Loop) {
		key := connKey(out.peer, out.c)
		if t.outByKey[key] == out {
			delete(t.outByKey, key)
		}
		if end {
			l.Send(out.peer, fwdTag(out.c), nil, nil)
		}
	})
}

// gone records that the acceptor dropped the connection (under the engine's progress
// lock) and tells core, from a goroutine of its own since core's handler takes locks.
func (out *outStream) gone(err error) {
	out.mu.Lock()
	if out.lostErr != nil || out.closed {
		out.mu.Unlock()
		return
	}
	out.lostErr = err
	out.mu.Unlock()
	out.kick()
	out.t.spawn(func() { out.lost(err) })
}

// WritePacket sends bufs as MPI messages on the connection's tag: runs of small
// buffers gathered into copied messages (each under recvDirectMin), for which
// WritePacket need not wait;
// each large buffer (a bulk packet's view of the caller's slice) in place, pinned, in
// pieces of at most maxChunk bytes, waiting until MPI is done with the memory. The
// gathered messages spend the connection's credit (credit.go) and wait for more while
// the acceptor's reader is behind.
func (out *outStream) WritePacket(bufs net.Buffers) error {
	out.mu.Lock()
	lostErr, closed := out.lostErr, out.closed
	out.mu.Unlock()
	switch {
	case closed:
		return fmt.Errorf("mp: writing to rank %d: %w", out.peer, net.ErrClosed)
	case lostErr != nil:
		// The acceptor dropped the connection and drops what still comes, as a socket
		// takes writes after its peer closed; core has heard of the loss through lost
		// and fails the messages that follow. Not failing here lets a sender's goodbye
		// (the Close packet) to a receiver that left first end cleanly, as over TCP.
		return nil
	}
	if n, ok := smallPacket(bufs); ok {
		if sent, err := out.writeSmall(bufs, n); sent {
			return err
		}
	}
	t := out.t
	msgs, direct := splitPacket(bufs)
	if len(msgs) == 0 {
		return nil
	}
	var w *directWait
	if direct > 0 {
		w = &directWait{done: make(chan struct{})}
		w.left.Store(int32(direct))
		for _, m := range msgs {
			if m.inPlace {
				w.bytes += len(m.b)
			}
		}
	}
	// The messages go to the engine in batches: a message that must wait for credit
	// or a send slot first sends the batch before it, so that what is waited for
	// never depends on messages held back here.
	start, batchCost, batchSlots := 0, 0, 0
	flush := func(end int) bool {
		part := msgs[start:end]
		if len(part) > 0 && !t.eng.Do(func(l *mpi.Loop) {
			tag := fwdTag(out.c)
			for _, m := range part {
				if m.inPlace {
					l.Send(out.peer, tag, m.b, w.complete)
				} else {
					l.Send(out.peer, tag, m.b, t.releaseSlot)
				}
			}
		}) {
			return false
		}
		start, batchCost, batchSlots = end, 0, 0
		return true
	}
	// fail gives back the slots and credit of the batch not sent.
	fail := func(err error) error {
		t.releaseSlots(batchSlots)
		out.refund(batchCost)
		return err
	}
	stopped := func() error { return fmt.Errorf("mp: writing to rank %d: %w", out.peer, ipl.ErrClosed) }
	for i, m := range msgs {
		c := charge(len(m.b)) // the same rule as the acceptor's, by size alone
		if c > 0 && !out.tryAcquire(c) {
			if !flush(i) {
				return fail(stopped())
			}
			if err := out.acquire(c); err != nil {
				if err == errDropping {
					return nil // as above: the acceptor drops what comes
				}
				return err
			}
		}
		if !m.inPlace {
			if err := out.takeSlot(func() bool { return flush(i) }); err != nil {
				out.refund(c)
				return fail(err)
			}
			batchSlots++
		}
		batchCost += c
	}
	if !flush(len(msgs)) {
		return fail(stopped())
	}
	if w == nil {
		return nil
	}
	if t.eng.Await(w.done, t.spinFor(w.bytes)) {
		return w.err
	}
	defer t.eng.Blocking()()
	select {
	case <-w.done:
		return w.err
	case <-out.closedCh:
		// MPI may still read the memory; it stays pinned until it is done.
		return fmt.Errorf("mp: writing to rank %d: %w", out.peer, net.ErrClosed)
	case <-t.closing:
		return fmt.Errorf("mp: writing to rank %d: %w", out.peer, ipl.ErrClosed)
	}
}

// splitPacket turns a packet's buffers into MPI messages: each buffer of sendDirectMin
// bytes or more in place, in pieces of at most maxChunk bytes, and each run of smaller
// buffers copied together into messages smaller than recvDirectMin, which the acceptor
// receives at once and which therefore spend credit. It returns the messages and how
// many of them are in place.
func splitPacket(bufs net.Buffers) (msgs []outMsg, direct int) {
	for i := 0; i < len(bufs); {
		if len(bufs[i]) >= sendDirectMin {
			for b := bufs[i]; len(b) > 0; b = b[min(len(b), maxChunk):] {
				msgs = append(msgs, outMsg{b[:min(len(b), maxChunk)], true})
				direct++
			}
			i++
			continue
		}
		n := 0
		j := i
		for ; j < len(bufs) && len(bufs[j]) < sendDirectMin; j++ {
			n += len(bufs[j])
		}
		if n > 0 {
			gather := make([]byte, 0, n)
			for _, b := range bufs[i:j] {
				gather = append(gather, b...)
			}
			for len(gather) > 0 {
				k := min(len(gather), gatherMax)
				msgs = append(msgs, outMsg{gather[:k], false})
				gather = gather[k:]
			}
		}
		i = j
	}
	return msgs, direct
}

// takeSlot takes a send slot for a gathered message; when none is free it first runs
// flush (which sends the messages before this one, whose slots will come back) and
// then waits, until the connection or the transport closes.
func (out *outStream) takeSlot(flush func() bool) error {
	t := out.t
	select {
	case t.slots <- struct{}{}:
		return nil
	default:
	}
	if !flush() {
		return fmt.Errorf("mp: writing to rank %d: %w", out.peer, ipl.ErrClosed)
	}
	defer t.eng.Blocking()() // slots come back as sends complete
	select {
	case t.slots <- struct{}{}:
		return nil
	case <-out.closedCh:
		return fmt.Errorf("mp: writing to rank %d: %w", out.peer, net.ErrClosed)
	case <-t.closing:
		return fmt.Errorf("mp: writing to rank %d: %w", out.peer, ipl.ErrClosed)
	}
}

// outMsg is one MPI message of a WritePacket: the caller's memory in place, or a
// gathered copy.
type outMsg struct {
	b       []byte
	inPlace bool
}

// releaseSlot frees the slot of a completed gathered send (under the engine's progress lock).
func (t *transport) releaseSlot(err error) {
	<-t.slots
	if err != nil {
		t.log.Warn("a send failed", zap.Error(err))
	}
}

// releaseSlots frees n slots whose sends were never started.
func (t *transport) releaseSlots(n int) {
	for range n {
		<-t.slots
	}
}

// directWait counts down the in-place sends of one WritePacket.
type directWait struct {
	bytes int
	left  atomic.Int32
	err   error
	once  sync.Once
	done  chan struct{}
}

func (w *directWait) complete(err error) {
	if err != nil {
		w.once.Do(func() { w.err = err })
	}
	if w.left.Add(-1) == 0 {
		close(w.done)
	}
}

// Close ends the connection: the acceptor gets the empty message that ends the stream.
func (out *outStream) Close() error {
	out.mu.Lock()
	if out.closed {
		out.mu.Unlock()
		return nil
	}
	out.closed = true
	close(out.closedCh)
	out.mu.Unlock()
	if out.est.Load() {
		out.abandon(true)
	}
	return nil
}
