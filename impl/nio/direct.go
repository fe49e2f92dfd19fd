package nio

import (
	"errors"
	"fmt"
	"net"

	"golang.org/x/sys/unix"

	"github.com/ibisgo/ibis/ipl"
)

// Direct writes. Handing each packet to the event loop and waiting for it to be written
// costs two hand-offs between goroutines per message, most of a small message's round
// trip; so while nothing is queued and no flush runs, the sender writes the packet
// itself with one writev on the non-blocking socket, and only what the socket does not
// take is copied and queued for the event loop. A message to one connection is written
// from the program's own bytes (WritePacket); a multicast writes the copy core made
// once (WriteShared). Order is kept because both the direct write and the flush take
// o.mu and a direct write happens only while the queue is empty and no flush is
// pending. The write is on gnet's descriptor, under o.mu while the connection is
// open, so gnet cannot have closed it (see queuedOut.fd).

// directOK reports whether the caller may write now: nothing queued, no flush running,
// the connection open. o.mu is held.
func (o *queuedOut) directOK() bool {
	return o.state == outOpen && len(o.q) == 0 && o.flushing == flushIdle
}

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
