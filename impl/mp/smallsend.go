//go:build mpi

package mp

import (
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/ibisgo/ibis/impl/mp/internal/mpi"
	"github.com/ibisgo/ibis/ipl"
)

// The small-packet path of WritePacket: a packet whose buffers together fit one
// gathered message (most messages of a request/reply program) is copied into a
// pooled buffer and handed to the engine in one call, with no closure, no list of
// messages and no fresh buffer per packet. A tiny one (up to mpi.InlineMax) goes
// from a buffer of the stream's own, when MPI is serialized: no request, pin, slot
// or pooled buffer at all when MPI is done with it at once (mpi.Engine.SendSmall),
// the usual case. When its credit or a send slot is not there at once, WritePacket
// takes its general path, which waits for them.

// sendBuf is a gathered message on its way: the copy MPI sends from, and what its
// completion gives back (its send slot, itself to the pool).
type sendBuf struct {
	t *transport
	b []byte
}

// sendBufKeep bounds the buffers the pool keeps: a larger one is left to the
// collector, so that one large packet does not hold its memory for good.
const sendBufKeep = 4 << 10

var sendBufs = sync.Pool{New: func() any { return &sendBuf{} }}

// Complete is the send's completion (under the engine's progress lock).
func (sb *sendBuf) Complete(err error) {
	sb.t.releaseSlot(err)
	sb.t = nil
	if cap(sb.b) <= sendBufKeep {
		sb.b = sb.b[:0]
		sendBufs.Put(sb)
	}
}

// smallPacket returns the size of bufs when they go as one gathered message (each
// buffer under sendDirectMin, together at most gatherMax and more than nothing).
func smallPacket(bufs net.Buffers) (int, bool) {
	n := 0
	for _, b := range bufs {
		if len(b) >= sendDirectMin {
			return 0, false
		}
		n += len(b)
	}
	return n, n > 0 && n <= gatherMax
}

// writeSmall sends bufs, n bytes together, as one gathered message if its credit and
// a send slot are there at once; sent reports whether it took the packet (err is then
// the outcome).
func (out *outStream) writeSmall(bufs net.Buffers, n int) (sent bool, err error) {
	t := out.t
	if !out.tryAcquire(charge(n)) {
		return false, nil
	}
	if n <= mpi.InlineMax && t.eng.Serialized() {
		// Tiny: sent from the stream's own gather buffer, as a rule done on return.
		out.tiny = out.tiny[:0]
		for _, b := range bufs {
			out.tiny = append(out.tiny, b...)
		}
		_, pending, err := t.eng.SendSmall(out.peer, fwdTag(out.c), out.tiny, t.lateSmall)
		if err != nil {
			out.refund(charge(n))
			if errors.Is(err, mpi.ErrStopped) {
				err = ipl.ErrClosed
			}
			return true, fmt.Errorf("mp: writing to rank %d: %w", out.peer, err)
		}
		if pending {
			out.tiny = nil // MPI still reads it: the next message gets a buffer of its own
		}
		return true, nil
	}
	select {
	case t.slots <- struct{}{}:
	default:
		out.refund(charge(n))
		return false, nil
	}
	sb := sendBufs.Get().(*sendBuf)
	sb.t = t
	for _, b := range bufs {
		sb.b = append(sb.b, b...)
	}
	if !t.eng.Send(out.peer, fwdTag(out.c), sb.b, sb) {
		t.releaseSlots(1)
		out.refund(charge(n))
		return true, fmt.Errorf("mp: writing to rank %d: %w", out.peer, ipl.ErrClosed)
	}
	return true, nil
}
