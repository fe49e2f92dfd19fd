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
func (in *inbound) Close() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.shut = true
	if in.fd >= 0 { // paused: the duplicate is all there is
		err := unix.Close(in.fd)
		in.fd = -1
		return err
	}
	if in.gc != nil {
		return in.gc.Close()
	}
	return in.nc.Close()
}

// enroll hands the socket to the event loop (the first time, and after each pause).
func (in *inbound) enroll(nc net.Conn) {
	in.enrolMu.Lock()
	defer in.enrolMu.Unlock()
	in.mu.Lock()
	in.reg = false
	in.mu.Unlock()
	gc, err := in.eng.enroll(nc, in)
	if err != nil {
		in.box.End(fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err))
		return
	}
	in.mu.Lock()
	shut := in.shut
	in.mu.Unlock()
	if shut { // the port closed the connection while it was being handed over
		_ = gc.Close()
	}
}

func (in *inbound) opened(c gnet.Conn) {
	in.mu.Lock()
	in.gc, in.reg = c, true
	in.mu.Unlock()
}

func (in *inbound) isOpen() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.reg
}

func (in *inbound) traffic(c gnet.Conn) gnet.Action {
	b, err := c.Next(-1)
	if err != nil {
		return gnet.Close
	}
	if !in.box.Push(b) {
		return gnet.None
	}
	return in.pause(c)
}

// pause drops the event loop's connection and keeps a duplicate of the socket.
func (in *inbound) pause(c gnet.Conn) gnet.Action {
	fd, err := c.Dup()
	if err != nil {
		return gnet.None // cannot pause: go on reading
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.shut || in.resumeOK {
		in.resumeOK = false
		_ = unix.Close(fd)
		return gnet.None
	}
	in.fd, in.gc = fd, nil
	in.paused[c] = struct{}{}
	pauses.Add(1)
	return gnet.Close
}

// resume hands the kept socket back to the event loop; the inbox calls it once the
// reader has drained it.
func (in *inbound) resume() {
	in.mu.Lock()
	fd := in.fd
	in.fd = -1
	if fd < 0 {
		in.resumeOK = !in.shut // the pause has not happened yet: cancel it
		in.mu.Unlock()
		return
	}
	in.mu.Unlock()
	f := os.NewFile(uintptr(fd), "nio-paused")
	nc, err := net.FileConn(f)
	_ = f.Close()
	if err != nil {
		in.box.End(fmt.Errorf("%w: resuming a paused connection: %w", ipl.ErrConnectionLost, err))
		return
	}
	in.enroll(nc)
}

func (in *inbound) closed(c gnet.Conn, err error) {
	in.mu.Lock()
	if _, ok := in.paused[c]; ok {
		delete(in.paused, c)
		in.mu.Unlock()
		return
	}
	if in.gc == c {
		in.gc = nil
	}
	in.mu.Unlock()
	if err != nil && !errors.Is(err, io.EOF) {
		in.box.End(fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err))
		return
	}
	in.box.End(nil)
}
