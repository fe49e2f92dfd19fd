package nio

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/ipl"
)

// inbound is an incoming connection of a nonblocking or thread-flavour receive port.
// The event loop pushes what the socket brings into the connection's inbox.
//
// Flow control: gnet reads every readable socket, so a receiver that falls behind
// would buffer without bound. When the inbox is full, the event loop keeps a duplicate
// of the socket and lets gnet drop the connection: the kernel then stops taking data,
// and TCP holds the sender back. Once the reader has drained the inbox, the duplicate
// is handed to the event loop again.
type inbound struct {
	box *core.Inbox
	eng *engine

	enrolMu sync.Mutex // one enrolment at a time: each checks that its own registration happened

	mu       sync.Mutex
	nc       net.Conn               // the socket while the handshake runs
	gc       gnet.Conn              // the event loop's connection, while it has one
	reg      bool                   // gnet registered the latest enrolment (OnOpen ran)
	paused   map[gnet.Conn]struct{} // connections dropped for a pause: their close is no end
	fd       int                    // the duplicate socket kept during a pause, -1 when none
	resumeOK bool                   // the reader asked to resume before the pause took effect
	shut     bool                   // the port closed the connection
}

var _ core.InConn = (*inbound)(nil)

// pauses counts the pauses of all connections of the process (read by tests).
var pauses atomic.Int64

func newInbound(nc net.Conn, eng *engine) *inbound {
	return &inbound{nc: nc, eng: eng, fd: -1, paused: map[gnet.Conn]struct{}{}}
}

// Close ends the connection whichever state it is in.
func (ib *inbound) Close() error {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	ib.shut = true
	if ib.fd >= 0 { // paused: the duplicate is all there is
		err := unix.Close(ib.fd)
		ib.fd = -1
		return err
	}
	if ib.gc != nil {
		return ib.gc.Close()
	}
	return ib.nc.Close()
}

// enroll hands the socket to the event loop (the first time, and after each pause).
func (ib *inbound) enroll(nc net.Conn) {
	ib.enrolMu.Lock()
	defer ib.enrolMu.Unlock()
	ib.mu.Lock()
	ib.reg = false
	ib.mu.Unlock()
	gc, err := ib.eng.enroll(nc, ib)
	if err != nil {
		ib.box.End(fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err))
		return
	}
	ib.mu.Lock()
	shut := ib.shut
	ib.mu.Unlock()
	if shut { // the port closed the connection while it was being handed over
		_ = gc.Close()
	}
}

func (ib *inbound) opened(c gnet.Conn) {
	ib.mu.Lock()
	ib.gc, ib.reg = c, true
	ib.mu.Unlock()
}

func (ib *inbound) isOpen() bool {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	return ib.reg
}

func (ib *inbound) traffic(c gnet.Conn) gnet.Action {
	b, err := c.Next(-1)
	if err != nil {
		return gnet.Close
	}
	if !ib.box.Push(b) {
		return gnet.None
	}
	return ib.pause(c)
}

// pause drops the event loop's connection and keeps a duplicate of the socket.
func (ib *inbound) pause(c gnet.Conn) gnet.Action {
	fd, err := c.Dup()
	if err != nil {
		return gnet.None // cannot pause: go on reading
	}
	ib.mu.Lock()
	defer ib.mu.Unlock()
	if ib.shut || ib.resumeOK {
		ib.resumeOK = false
		_ = unix.Close(fd)
		return gnet.None
	}
	ib.fd, ib.gc = fd, nil
	ib.paused[c] = struct{}{}
	pauses.Add(1)
	return gnet.Close
}

// resume hands the kept socket back to the event loop; the inbox calls it once the
// reader has drained it.
func (ib *inbound) resume() {
	ib.mu.Lock()
	fd := ib.fd
	ib.fd = -1
	if fd < 0 {
		ib.resumeOK = !ib.shut // the pause has not happened yet: cancel it
		ib.mu.Unlock()
		return
	}
	ib.mu.Unlock()
	f := os.NewFile(uintptr(fd), "nio-paused")
	nc, err := net.FileConn(f)
	_ = f.Close()
	if err != nil {
		ib.box.End(fmt.Errorf("%w: resuming a paused connection: %w", ipl.ErrConnectionLost, err))
		return
	}
	ib.enroll(nc)
}

func (ib *inbound) closed(c gnet.Conn, err error) {
	ib.mu.Lock()
	if _, ok := ib.paused[c]; ok {
		delete(ib.paused, c)
		ib.mu.Unlock()
		return
	}
	if ib.gc == c {
		ib.gc = nil
	}
	ib.mu.Unlock()
	if err != nil && !errors.Is(err, io.EOF) {
		ib.box.End(fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err))
		return
	}
	ib.box.End(nil)
}
