package nio

import (
	"fmt"
	"net"
	"os"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"

	"github.com/ibisgo/ibis/ipl"
)

// Pausing an inbound connection. gnet reads every readable socket it holds and has no
// way to stop reading one (gnet issue #722, closed unresolved), so a receiver that
// falls behind would make the event loop buffer without bound. When the inbox says it
// is full (inbox.InboxHighWater, inbox.PortHighWater), the event loop keeps a duplicate
// of the descriptor (inbound.fd) and lets gnet drop the connection, which removes it
// from epoll: the kernel's receive buffer fills and TCP holds the sender back. While
// paused, Close, NotifyCut and Pending use the duplicate. Resuming re-enrols the
// duplicate with the event loop. A resume that comes before the pause took effect
// (the reader drained the inbox first) cancels it (inResumeEarly).

// pause drops the event loop's connection and keeps a duplicate of the socket.
func (ib *inbound) pause(c gnet.Conn) gnet.Action {
	fd, err := c.Dup()
	if err != nil {
		return gnet.None // cannot pause: go on reading
	}
	ib.mu.Lock()
	defer ib.mu.Unlock()
	if !ib.to(inPaused) {
		// Closed (the close is on its way), or the reader resumed first
		// (inResumeEarly): go on reading.
		ib.to(inReading)
		_ = unix.Close(fd)
		return gnet.None
	}
	ib.fd, ib.gc = fd, nil
	ib.paused[c] = struct{}{}
	ib.eng.hk.onPaused()
	return gnet.Close
}

// resume hands the kept socket back to the event loop; the inbox calls it once the
// reader has drained it.
func (ib *inbound) resume() {
	ib.mu.Lock()
	if ib.to(inResumeEarly) { // the pause has not happened yet: cancel it
		ib.mu.Unlock()
		return
	}
	if !ib.to(inEnrolling) { // not paused: closed, or ended
		ib.mu.Unlock()
		return
	}
	fd := ib.fd
	ib.fd = -1
	ib.mu.Unlock()
	f := os.NewFile(uintptr(fd), "nio-paused")
	nc, err := net.FileConn(f)
	_ = f.Close()
	if err != nil {
		ib.mu.Lock()
		ib.to(inEnded)
		ib.mu.Unlock()
		ib.box.End(fmt.Errorf("%w: resuming a paused connection: %w", ipl.ErrConnectionLost, err))
		return
	}
	ib.enroll(nc)
}

// closeHeld closes the duplicate of a paused connection; ib.mu is held.
func (ib *inbound) closeHeld() error {
	err := unix.Close(ib.fd)
	ib.fd = -1
	return err
}

// writeHeld writes b on the duplicate of a paused connection, without waiting: the
// socket is non-blocking, and a cut notice fits an empty send buffer. ib.mu is held.
func (ib *inbound) writeHeld(b []byte) {
	_, _ = unix.Write(ib.fd, b)
}
