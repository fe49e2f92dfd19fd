//go:build mpi

package mp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/impl/mp/internal/mpi"
	"github.com/ibisgo/ibis/internal/wake"
	"github.com/ibisgo/ibis/ipl"
)

// Flow control (the one description; the package doc summarises it). MPI completes a small send as soon as it has copied the bytes (the
// eager protocol), and the receiving engine takes every small message off MPI at once
// so that MPI's own queues stay short; without a limit a sender that outpaces its
// reader would pile up any amount of memory at the receiver. So each connection has a
// window of credit in bytes: the dialler spends credit on each message smaller than
// recvDirectMin (the ones the acceptor receives at once: every gathered message, and
// the short tail of a huge in-place buffer) and waits in WritePacket when it has none
// left (until credit comes, the connection or the instance closes, or the acceptor
// drops the connection); the acceptor gives credit back, on the connection's reverse
// tag in messages of creditReturn, as its reader consumes those bytes. A receiver thus
// buffers at most about creditWindow per connection, like a socket's buffers. Larger messages need no credit: they are in-place buffers, which the
// acceptor leaves in MPI until the reader asks and for which the dialler's WritePacket
// waits, so the reader itself holds the sender back. A single message costs less than
// recvDirectMin, far less than the window, and the dialler sends what it holds before
// it waits, so what it waits for never depends on what it holds back.
const (
	// creditWindow is the credit a connection starts with: what a receiver buffers
	// per connection at most, besides large messages left in MPI. Like a socket's
	// buffers, it lets a sender run ahead of its reader by this much.
	creditWindow = 1 << 20
	// creditReturn is how much consumed credit the acceptor collects before it
	// sends it back in one message.
	creditReturn = creditWindow / 4
	// creditMsgSize is the size of a credit message: the amount, big-endian.
	creditMsgSize = 8
)

// creditWaiters counts the writers of the process waiting for credit (there is one
// mp instance per process); tests watch it to see a sender held back.
var creditWaiters atomic.Int32

// charge is the credit an MPI message of n bytes on a connection costs; both sides
// apply it, by size alone.
func charge(n int) int {
	if n < recvDirectMin {
		return n
	}
	return 0
}

// errDropping tells WritePacket that the acceptor dropped the connection while it
// waited for credit: what is written from now on is dropped, as over a socket whose
// peer closed.
var errDropping = errors.New("mp: the acceptor dropped the connection")

// acquire takes n bytes of credit, waiting while the acceptor's reader is behind. It
// ends when the credit comes, the connection or the transport closes, or the acceptor
// drops the connection (errDropping).
func (out *outStream) acquire(n int) error {
	if n == 0 {
		return nil
	}
	for {
		out.mu.Lock()
		switch {
		case out.closed:
			out.mu.Unlock()
			return fmt.Errorf("mp: writing to rank %d: %w", out.peer, net.ErrClosed)
		case out.lostErr != nil:
			out.mu.Unlock()
			return errDropping
		case out.credit >= n:
			out.credit -= n
			out.mu.Unlock()
			return nil
		}
		out.mu.Unlock()
		// Credit comes as an MPI message: poll for it first (which makes progress
		// when nobody else does), then block.
		if out.t.eng.Await(out.creditCh, out.t.waitSpin) {
			continue
		}
		creditWaiters.Add(1)
		unblock := out.t.eng.Blocking()
		select {
		case <-out.creditCh:
		case <-out.closedCh:
		case <-out.t.closing:
			unblock()
			creditWaiters.Add(-1)
			return fmt.Errorf("mp: writing to rank %d: %w", out.peer, ipl.ErrClosed)
		}
		unblock()
		creditWaiters.Add(-1)
	}
}

// tryAcquire takes n bytes of credit if they are there, without waiting.
func (out *outStream) tryAcquire(n int) bool {
	out.mu.Lock()
	defer out.mu.Unlock()
	if out.closed || out.lostErr != nil || out.credit < n {
		return false
	}
	out.credit -= n
	return true
}

// refund gives back credit taken for messages that were never started.
func (out *outStream) refund(n int) {
	if n > 0 {
		out.addCredit(n)
	}
}

// addCredit adds n bytes of credit and wakes a writer waiting for it.
func (out *outStream) addCredit(n int) {
	out.mu.Lock()
	out.credit += n
	out.mu.Unlock()
	out.kick()
}

// kick wakes a writer waiting in acquire, to look again. One wake-up is kept, which is
// enough: core never writes to one connection from two goroutines at once.
func (out *outStream) kick() {
	wake.Poke(out.creditCh)
}

// gotCredit takes a credit message from the acceptor (under the engine's progress lock).
func (out *outStream) gotCredit(buf []byte) {
	if len(buf) != creditMsgSize {
		out.t.log.Warn("ignoring a malformed credit message", zap.Int("from", out.peer), zap.Int("bytes", len(buf)))
		return
	}
	n := binary.BigEndian.Uint64(buf)
	if n == 0 || n > creditWindow {
		out.t.log.Warn("ignoring a credit message out of range", zap.Int("from", out.peer), zap.Uint64("credit", n))
		return
	}
	out.mu.Lock()
	out.credit += int(n)
	if out.credit > creditWindow {
		// More than was ever spent: a confused peer. Never more than the window.
		out.t.log.Warn("credit beyond the window", zap.Int("from", out.peer), zap.Int("credit", out.credit))
		out.credit = creditWindow
	}
	out.mu.Unlock()
	out.kick()
}

// consumed records that the reader has used up a chunk that cost its dialler n bytes
// of credit, and returns how much credit to send back now (0: not yet); s.mu is held.
func (s *inStream) consumed(n int) int {
	if n == 0 {
		return 0
	}
	s.unreturned += n
	if s.unreturned < creditReturn {
		return 0
	}
	n, s.unreturned = s.unreturned, 0
	return n
}

// giveCredit sends n bytes of credit back to the dialler, unless the stream has ended
// on either side by the time the engine gets to it.
func (s *inStream) giveCredit(n int) {
	if n == 0 {
		return
	}
	t := s.t
	b := make([]byte, creditMsgSize)
	binary.BigEndian.PutUint64(b, uint64(n))
	t.eng.Do(func(l *mpi.Loop) {
		if t.inByKey[s.key] == s {
			l.Send(s.src, revTag(s.c), b, nil)
		}
	})
}
