package nio

import (
	"fmt"

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
