package nio

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/ibisgo/ibis/ipl"
	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// Where nio works beneath gnet v2, on the socket's descriptor, and why. Everything
// else goes through gnet's API; these are the places its limits leave no other way:
//
//   - Reading: gnet reads only into its own buffer, from which Conn.Read and Next
//     copy. OnTraffic runs on the loop that owns the connection, so it may read the
//     non-blocking descriptor itself (socketReader) straight into a waiting
//     receiver's slice or the inbox's pooled buffers: one copy out of the kernel.
//   - Pausing: gnet reads every readable socket and cannot stop reading one (gnet
//     issue #722, closed unresolved), so a receiver that falls behind would make the
//     loop buffer without bound. A full inbox keeps a duplicate of the descriptor and
//     lets gnet drop the connection; resuming re-enrols the duplicate (pause, resume).
//   - Writing: gnet's write path (AsyncWritev) reports completion once bytes are in
//     its own buffer, not on the wire, and its close drops what that buffer holds; the
//     queue's bounds and Drain's "written" need the kernel's word. So the sender
//     (direct writes) and the flush write gnet's descriptor with writev under the
//     connection's lock, while it is open (gnet closes it only after OnClose, which
//     takes that lock). Going through AsyncWritev instead was measured slower
//     (docs/MESSAGE-PATH.md, the A/B).
//   - Waiting for room: gnet tells writability only to its own write path, so a full
//     socket is waited on by Go's netpoller on a duplicate that only ever waits
//     (watch, awaitWritable): no timer, no retry loop.

// Reading.

// The inbox lends a waiting receiver's slice or pooled buffers (internal/inbox/posted.go);
// OnTraffic reads into them once it has taken what gnet buffered (Next). gnet reads a
// connection only on its own loop, between callbacks, so nothing else reads meanwhile;
// what stays unread keeps the descriptor readable, and gnet's level-triggered poller
// calls OnTraffic again for it.

// socketReader returns a read for inbox.Inbox.FillFrom on the descriptor fd: (0, nil)
// when the socket has nothing more now, io.EOF at its end.
func socketReader(fd int) func(p []byte) (int, error) {
	return func(p []byte) (int, error) {
		for {
			n, err := unix.Read(fd, p)
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case errors.Is(err, unix.EAGAIN):
				return 0, nil
			case err != nil:
				return 0, err
			case n == 0:
				return 0, io.EOF
			}
			return n, nil
		}
	}
}

// Pausing.

// While paused, Close, NotifyCut and Pending use the duplicate (inbound.fd). A resume
// that comes before the pause took effect (the reader drained the inbox first) cancels
// it (inResumeEarly).

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

// Writing.

// writeDirect writes b to the socket until the socket is full or everything is written and
// returns the bytes written; an error is a broken connection. o.mu is held.
func (o *queuedOut) writeDirect(b []byte) (int, error) {
	total := 0
	for total < len(b) {
		n, err := unix.Write(o.fd, b[total:])
		if n > 0 {
			total += n
		}
		switch {
		case err == nil:
		case errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.EAGAIN):
			o.eng.hk.onDirect(true)
			return total, nil
		default:
			return total, err
		}
	}
	o.eng.hk.onDirect(false)
	return total, nil
}

// writevDirect writes bufs to the socket with writev until the socket is full or everything
// is written, and returns what is left (consuming bufs, as net.Buffers.WriteTo does);
// an error is a broken connection. o.mu is held.
func (o *queuedOut) writevDirect(bufs net.Buffers) (net.Buffers, error) {
	for len(bufs) > 0 {
		n, err := unix.Writev(o.fd, bufs[:min(len(bufs), maxIovecs)])
		bufs = consume(bufs, max(n, 0))
		switch {
		case err == nil && n == 0 && len(bufs) > 0, errors.Is(err, unix.EAGAIN): // n == 0: as full
			o.eng.hk.onDirect(true)
			return bufs, nil
		case err == nil, errors.Is(err, unix.EINTR):
		default:
			return bufs, err
		}
	}
	o.eng.hk.onDirect(false)
	return nil, nil
}

// consume drops the first n bytes of bufs.
func consume(bufs net.Buffers, n int) net.Buffers {
	for n > 0 && len(bufs) > 0 {
		if n < len(bufs[0]) {
			bufs[0] = bufs[0][n:]
			return bufs
		}
		n -= len(bufs[0])
		bufs[0] = nil
		bufs = bufs[1:]
	}
	for len(bufs) > 0 && len(bufs[0]) == 0 {
		bufs = bufs[1:]
	}
	return bufs
}

// receiverGone reports whether a write failed because the receiver is gone (broken
// pipe, reset). The connection is then left to the event loop, which reads what the
// receiver wrote before its end (a cut notice, core/cutnotice.go) and closes it; the
// send port closes it too once it has heard the end (or gave up waiting).
func receiverGone(err error) bool {
	return errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ECONNRESET)
}

// writevFd writes iov to the non-blocking socket fd once; see "Writing" above.
func writevFd(fd int, iov [][]byte) (int, error) { return unix.Writev(fd, iov) }

// Waiting for room.

// The duplicate is made on the connection's first full socket and closed at its end,
// which ends a wait under way. Each wait is a goroutine of the engine, which waits for
// them when it stops.

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
