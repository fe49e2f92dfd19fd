package nio

import (
	"errors"
	"fmt"
	"net"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/ibisgo/ibis/ipl"
)

// Direct writes. A nonblocking send port hands its packets to the event loop, which
// writes them; the sender then waits for the loop to say they are written. That costs
// two hand-offs between goroutines (threads, on a busy machine) per message, most of
// the round trip of a small message. When nothing is queued on the connection, the
// sender writes the packet itself, with one writev on the non-blocking socket: what
// the socket takes is done, only the rest is queued for the loop. A message to one
// connection is written from the program's own bytes (WritePacket), and only the rest
// is copied; a multicast writes the copy core made once with Share (WriteShared). Order is kept because a direct write happens only while the queue
// is empty and no flush runs, and both take o.mu.
//
// The sender writes through its own duplicate of the socket's descriptor, wfd, and
// holds o.mu for the write (which never blocks: the socket is non-blocking). The event
// loop may close its descriptor at any time (the peer went away), but the socket stays
// open under wfd until the end (queuedOut.end), which takes o.mu and so waits for a write in progress,
// closes wfd. Without the duplicate a write could land in whatever socket reused the
// descriptor's number after the loop's close.

// directWrites counts the packets senders of the process wrote themselves (read by
// tests), directRests those of them the socket took only in part.
var directWrites, directRests atomic.Int64

// dupFD returns a close-on-exec duplicate of c's descriptor for direct writes, or -1
// when c is not a TCP connection or the duplicate fails (the sender then always queues).
func dupFD(c net.Conn) int {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return -1
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return -1
	}
	fd, derr := -1, error(nil)
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil || derr != nil {
		return -1
	}
	return fd
}

// directOK reports whether the caller may write now: nothing queued, no flush running,
// the connection alive and a descriptor to write to. o.mu is held.
func (o *queuedOut) directOK() bool {
	return o.state == outOpen && o.wfd >= 0 && len(o.q) == 0 && o.flushing == flushIdle
}

// writeDirect writes b to wfd until the socket is full or everything is written and
// returns the bytes written; an error is a broken connection. o.mu is held.
func (o *queuedOut) writeDirect(b []byte) (int, error) {
	directWrites.Add(1)
	total := 0
	for total < len(b) {
		n, err := unix.Write(o.wfd, b[total:])
		if n > 0 {
			total += n
		}
		switch {
		case err == nil:
		case errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.EAGAIN):
			directRests.Add(1)
			return total, nil
		default:
			return total, err
		}
	}
	return total, nil
}

// writevDirect writes bufs to wfd with writev until the socket is full or everything
// is written, and returns what is left (consuming bufs, as net.Buffers.WriteTo does);
// an error is a broken connection. o.mu is held.
func (o *queuedOut) writevDirect(bufs net.Buffers) (net.Buffers, error) {
	directWrites.Add(1)
	for len(bufs) > 0 {
		n, err := unix.Writev(o.wfd, bufs[:min(len(bufs), maxIovecs)])
		bufs = consume(bufs, max(n, 0))
		switch {
		case err == nil && n == 0 && len(bufs) > 0:
			directRests.Add(1) // took nothing: as full
			return bufs, nil
		case err == nil:
		case errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.EAGAIN):
			directRests.Add(1)
			return bufs, nil
		default:
			return bufs, err
		}
	}
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

// directFailed ends the connection after a failed direct write and returns the
// sender's error.
func (o *queuedOut) directFailed(err error) error {
	err = fmt.Errorf("%w: writing: %w", ipl.ErrConnectionLost, err)
	o.fail(err)
	if !receiverGone(err) {
		_ = o.gc.Close()
	}
	return err
}

// closeWFD closes the sender's descriptor; o.mu is held.
func (o *queuedOut) closeWFD() {
	if o.wfd >= 0 {
		_ = unix.Close(o.wfd)
		o.wfd = -1
	}
}
