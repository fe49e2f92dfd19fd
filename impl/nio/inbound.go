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

	mu       sync.Mutex
	nc       net.Conn  // the socket while the handshake runs
	gc       gnet.Conn // the event loop's connection, while it has one
	paused   gnet.Conn // the connection dropped for a pause (its close is not an end)
	fd       int       // the duplicate socket kept during a pause, -1 when none
	resumeOK bool      // the reader asked to resume before the pause took effect
	shut     bool      // the port closed the connection
}

var _ core.InConn = (*inbound)(nil)

// pauses counts the pauses of all connections of the process (read by tests).
var pauses atomic.Int64

func newInbound(nc net.Conn, eng *engine) *inbound { return &inbound{nc: nc, eng: eng, fd: -1} }

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

// enrolled records the event loop's connection; it reports false when the port closed
// the connection meanwhile (the caller then closes gc).
func (in *inbound) enrolled(gc gnet.Conn) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.gc = gc
	return !in.shut
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
	in.fd, in.paused, in.gc = fd, c, nil
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
	gc, err := in.eng.enroll(nc, in)
	if err != nil {
		in.box.End(fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err))
		return
	}
	if !in.enrolled(gc) {
		_ = gc.Close()
	}
}

func (in *inbound) closed(c gnet.Conn, err error) {
	in.mu.Lock()
	if in.paused == c {
		in.paused = nil
		in.mu.Unlock()
		return
	}
	in.mu.Unlock()
	if err != nil && !errors.Is(err, io.EOF) {
		in.box.End(fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err))
		return
	}
	in.box.End(nil)
}
