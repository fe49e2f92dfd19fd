package nio

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/impl/internal/sockets"
	"github.com/ibisgo/ibis/impl/nio/internal/inbox"
	"github.com/ibisgo/ibis/internal/fsm"
	"github.com/ibisgo/ibis/ipl"
)

// inbound is an incoming connection of a nonblocking or thread-flavour receive port.
// The event loop pushes what the socket brings into the connection's inbox.
//
// Flow control: when the inbox says it is full, the event loop stops reading the
// socket (descriptor.go) until the reader has drained the inbox.
//
// Its life is an inState (see there), changed only through to.
//
// Lock order: enrolMu before mu. Only enrolMu is held while waiting for the event loop
// (around gnet's EnrollContext, which waits for OnOpen; opened takes mu, never
// enrolMu). mu is held around gnet's Close, which only queues the close on the loop.
// core's inbox is called without mu (Push, End), and under enrolMu only for the End of
// a failed enrolment: the inbox calls resume without its own locks held, so this
// cannot cycle.
type inbound struct {
	box *inbox.Inbox
	eng *engine

	enrolMu sync.Mutex // one enrolment at a time: each checks that its own registration happened

	mu    sync.Mutex
	state inState
	nc    net.Conn  // the socket while the handshake runs (gnet closes it when it takes it over)
	gc    gnet.Conn // the event loop's connection, while it has one
	fd    int       // the duplicate socket kept while inPaused, -1 otherwise
	// registered says gnet registered the enrolment under way (its OnOpen ran):
	// engine.enroll looks at it once EnrollContext returns. It belongs to that
	// enrolment (enrolMu), not to the state: by the time enroll looks, the connection
	// may have been paused, resumed or closed.
	registered bool
	// paused holds the event loop's connections of earlier enrolments dropped for a
	// pause whose OnClose has not run yet: their close is no end. They are apart from
	// the state because the connection moves on (resumes, enrols again) before gnet
	// reports them closed.
	paused map[gnet.Conn]struct{}
}

// inState is where an incoming queued connection is in its life. Its moves, each with
// the event that makes it:
//
//	inHandshake   --enroll---------------> inEnrolling
//	inEnrolling   --opened (OnOpen)------> inReading
//	inEnrolling   --enrolment failed-----> inEnded (also a resumed socket net.FileConn refused)
//	inReading     --pause (inbox full)---> inPaused
//	inReading     --resume---------------> inResumeEarly
//	inResumeEarly --pause----------------> inReading (the pause is cancelled)
//	inReading     --closed (OnClose)-----> inEnded
//	inResumeEarly --closed (OnClose)-----> inEnded
//	inPaused      --resume---------------> inEnrolling
//	any but inShut --Close---------------> inShut
//
// A pause and a resume alternate (the inbox asks for one resume per full Push), so a
// connection goes round reading, paused, enrolling, reading; or, when the reader is
// quicker than the event loop, round reading, resume-early, reading.
//
// States:
//
//   - inHandshake: nc is served by the handshake's goroutine.
//   - inEnrolling: a socket is being handed to gnet, the first time or after a
//     pause; its OnOpen has not run.
//   - inReading: gnet serves gc and pushes what comes into the inbox.
//   - inResumeEarly: reading, and the reader drained the inbox before the pause its
//     last Push asked for took effect: that pause is cancelled.
//   - inPaused: gnet's connection was dropped; fd keeps the socket.
//   - inEnded: the connection ended on its own (the peer closed, an error, a failed
//     enrolment or resumption): the inbox has its End. Nothing leaves it but Close.
//   - inShut: the port closed the connection. Nothing leaves this state; events that
//     come late only release what they hold.
type inState uint8

const (
	inHandshake inState = iota
	inEnrolling
	inReading
	inResumeEarly
	inPaused
	inEnded
	inShut
)

var inStateNames = [...]string{inHandshake: "handshake", inEnrolling: "enrolling", inReading: "reading",
	inResumeEarly: "resume-early", inPaused: "paused", inEnded: "ended", inShut: "shut"}

// String names the state for logs and test failures.
func (s inState) String() string { return fsm.Name(inStateNames[:], s, "inState") }

// CanMove reports whether the table at inState has a move from s to next.
func (s inState) CanMove(next inState) bool {
	if next == inShut {
		return s != inShut
	}
	switch s {
	case inHandshake:
		return next == inEnrolling
	case inEnrolling:
		return next == inReading || next == inEnded
	case inReading:
		return next == inPaused || next == inResumeEarly || next == inEnded
	case inResumeEarly:
		return next == inReading || next == inEnded
	case inPaused:
		return next == inEnrolling
	}
	return false
}

// to moves the connection to next if the diagram allows it and reports whether it
// did; ib.mu is held.
func (ib *inbound) to(next inState) bool { return fsm.Move(&ib.state, next) }

var _ core.InConn = (*inbound)(nil)

func newInbound(nc net.Conn, eng *engine) *inbound {
	return &inbound{nc: nc, eng: eng, fd: -1, paused: map[gnet.Conn]struct{}{}}
}

// Close ends the connection whichever state it is in, closing what it holds: the
// duplicate while paused, else gnet's connection, else the handshake's socket.
func (ib *inbound) Close() error {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	ib.to(inShut)
	if ib.fd >= 0 { // paused: the duplicate is all there is
		return ib.closeHeld()
	}
	if ib.gc != nil {
		return ib.gc.Close()
	}
	return ib.nc.Close()
}

// NotifyCut writes a cut notice before the connection is cut (core's CutNotifier):
// through gnet while the event loop has the connection (its close sends what is
// queued first), on the duplicate descriptor while paused.
func (ib *inbound) NotifyCut(notice []byte) {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	switch {
	case ib.state == inShut:
	case ib.fd >= 0:
		ib.writeHeld(notice)
	case ib.gc != nil:
		_ = ib.gc.AsyncWrite(notice, nil)
	default:
		_ = ib.nc.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = ib.nc.Write(notice)
	}
}

// Pending reports how many bytes the kernel holds unread for the connection (core's
// PendingCounter): the stall watchdog cuts a dead sender's connection only once they
// have been read.
func (ib *inbound) Pending() (int, bool) {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	fd := ib.fd // the duplicate, while paused
	if fd < 0 && ib.gc != nil {
		fd = ib.gc.Fd()
	}
	if fd < 0 || ib.state == inShut {
		return 0, false
	}
	n, err := sockets.FDPending(fd)
	return n, err == nil
}

// enroll hands the socket to the event loop (the first time, and after each pause).
func (ib *inbound) enroll(nc net.Conn) {
	ib.enrolMu.Lock()
	defer ib.enrolMu.Unlock()
	ib.mu.Lock()
	ib.to(inEnrolling) // the first time; resume moved a paused connection already
	ib.registered = false
	ib.mu.Unlock()
	gc, err := ib.eng.enroll(nc, ib)
	if err != nil {
		ib.mu.Lock()
		ib.to(inEnded)
		ib.mu.Unlock()
		ib.box.End(fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err))
		return
	}
	ib.mu.Lock()
	shut := ib.state == inShut
	ib.mu.Unlock()
	if shut { // the port closed the connection while it was being handed over
		_ = gc.Close()
	}
}

func (ib *inbound) opened(c gnet.Conn) {
	ib.eng.spinOf(c.EventLoop()).add(c.Fd())
	ib.mu.Lock()
	ib.to(inReading) // unless Close came first: then enroll closes c
	ib.gc, ib.registered = c, true
	ib.mu.Unlock()
}

func (ib *inbound) isOpen() bool {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	return ib.registered
}

// traffic pushes what gnet read into the inbox; when a receiver's posted slice waits,
// or gnet's read filled its buffer (more is likely to wait), the inbox then reads the
// socket itself (descriptor.go). Then the loop polls for a while (loopspin.go), and
// reads the socket itself again while the bytes that come are this connection's alone.
func (ib *inbound) traffic(c gnet.Conn) gnet.Action {
	b, err := c.Next(-1)
	if err != nil {
		return gnet.Close
	}
	if ib.box.Push(b) {
		return ib.pause(c)
	}
	ls := ib.eng.spinOf(c.EventLoop())
	fd := c.Fd()
	read := socketReader(fd)
	got := 0
	counted := func(p []byte) (int, error) {
		n, err := read(p)
		got += n
		return n, err
	}
	more := len(b) >= readBufferCap
	for round := 0; ; round++ {
		switch full, err := ib.box.FillFrom(counted, more); {
		case err == nil && full:
			return ib.pause(c)
		case err == nil:
		case errors.Is(err, io.EOF):
			return gnet.Close // closed reports the end, as for gnet's own read
		default:
			ib.box.End(fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err))
			return gnet.Close
		}
		if more && got == 0 {
			// The socket has bytes the inbox did not take (it ended, or holds its
			// high water): gnet's next read deals with them.
			return gnet.None
		}
		if round == maxPollRounds || !ls.await(fd) {
			return gnet.None
		}
		more, got = true, 0
	}
}

func (ib *inbound) closed(c gnet.Conn, err error) {
	ib.eng.spinOf(c.EventLoop()).remove(c.Fd())
	ib.mu.Lock()
	if _, ok := ib.paused[c]; ok {
		delete(ib.paused, c)
		ib.mu.Unlock()
		return
	}
	if ib.gc == c {
		ib.gc = nil
		ib.to(inEnded)
	}
	ib.mu.Unlock()
	if err != nil && !errors.Is(err, io.EOF) {
		ib.box.End(fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err))
		return
	}
	ib.box.End(nil)
}
