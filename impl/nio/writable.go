package nio

import (
	"fmt"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ibisgo/ibis/ipl"
)

// Waiting for a full socket. When the socket of a queued connection takes no more, its
// flush must run again once the kernel has room. gnet reports writability only to its
// own write path (Conn.Write, AsyncWritev), which copies what the socket does not take
// into a buffer of its own: the queue's bounds and Drain's "written" would then end at
// gnet's buffer, whose end nothing reports, and gnet's close drops what it still holds.
// So the wait is Go's netpoller's, on a duplicate of the descriptor (watch) that only
// ever waits, never reads or writes: made on the connection's first full socket and
// closed at its end, which ends a wait under way. Each wait is a goroutine of the
// engine, which waits for them when it stops.

// watch is the duplicate a full socket is waited on.
type watch struct {
	nc net.Conn
	rc syscall.RawConn
}

// newWatch duplicates fd into a descriptor of Go's netpoller.
func newWatch(fd int) (*watch, error) {
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(d), "nio-watch")
	nc, err := net.FileConn(f) // a duplicate of its own, registered with the netpoller
	_ = f.Close()
	if err != nil {
		return nil, err
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		_ = nc.Close()
		return nil, fmt.Errorf("nio: %T has no descriptor", nc)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		_ = nc.Close()
		return nil, err
	}
	return &watch{nc: nc, rc: rc}, nil
}

// awaitWritable starts a wait for the socket to take bytes again; the flush then runs.
// The flush stays pending meanwhile, so nothing is written around the queue. A
// connection whose socket cannot be waited on fails. o.mu is held, on the event loop.
func (o *queuedOut) awaitWritable() error {
	if o.watch == nil {
		w, err := newWatch(o.fd)
		if err != nil {
			return fmt.Errorf("nio: waiting for a full socket: %w", err)
		}
		o.watch = w
	}
	w := o.watch
	o.eng.hk.onFull()
	o.eng.wait.Go(func() {
		// RawConn.Write arms the netpoller before it asks writable, so a socket that
		// drains in between is not missed.
		if w.rc.Write(writable) != nil {
			return // the watch was closed: the connection ended
		}
		o.mu.Lock()
		var err error
		if o.state == outOpen {
			// Under o.mu, gnet's OnClose cannot have run, so the event loop still
			// takes tasks; Execute only queues one.
			err = o.execFlush()
		}
		o.mu.Unlock()
		if err != nil {
			o.fail(fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err))
		}
	})
	return nil
}

// writable reports whether the socket fd takes bytes now (or has failed, which the
// flush then finds).
func writable(fd uintptr) bool {
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
	n, err := unix.Poll(p, 0)
	return err != nil || (n > 0 && p[0].Revents != 0)
}

// closeWatch ends any wait under way; o.mu is held.
func (o *queuedOut) closeWatch() {
	if o.watch != nil {
		_ = o.watch.nc.Close()
		o.watch = nil
	}
}
