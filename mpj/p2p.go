package mpj

import (
	"context"
	"fmt"

	"github.com/ibisgo/ibis/ipl"
)

// Send sends buf (a slice of a primitive type; nil for an empty message) to rank dest
// with tag tag (0..MaxTag). It is MPI's standard mode with an unlimited eager limit:
// the receiver's dispatcher always takes a message, into the matching receive's
// buffer or into a queue of its own, so Send returns once the message is handed to
// the network (or, to this process itself, copied), without waiting for a receive;
// "both send, then both receive" cannot deadlock. buf may be reused when Send returns.
func (c *Comm) Send(ctx context.Context, buf any, dest, tag int) error {
	if err := checkTag(tag, false); err != nil {
		return err
	}
	return c.send(ctx, c.ctx, buf, dest, tag, false)
}

// Ssend is the synchronous send (MPI_Ssend): it returns only when the receiver has
// matched the message with a receive, which a program uses to know its peer has got
// that far, or to find where a program relies on buffering.
func (c *Comm) Ssend(ctx context.Context, buf any, dest, tag int) error {
	if err := checkTag(tag, false); err != nil {
		return err
	}
	return c.send(ctx, c.ctx, buf, dest, tag, true)
}

// Isend starts a send (MPI_Isend). The transfer happens before Isend returns (as a
// standard Send: it never waits for the receiver), so the request is complete at once;
// it exists so that MPI programs written with Isend and Wait port unchanged.
func (c *Comm) Isend(ctx context.Context, buf any, dest, tag int) (*Request, error) {
	r := newRequest()
	err := c.Send(ctx, buf, dest, tag)
	if err != nil {
		return nil, err
	}
	r.finish(Status{}, nil)
	return r, nil
}

// Recv receives a message from rank source (or AnySource) with tag tag (or AnyTag)
// into buf (MPI_Recv), and returns its status. The message's element type must be
// buf's (else an error matching ErrTypeMismatch) and it must fit (else ErrTruncated);
// either way the message is consumed, as in MPI. Messages from one sender on one
// communicator with one tag are received in the order they were sent.
func (c *Comm) Recv(ctx context.Context, buf any, source, tag int) (Status, error) {
	return c.recv(ctx, c.ctx, buf, source, tag)
}

// Irecv posts a receive (MPI_Irecv) and returns at once; buf belongs to mpj until the
// request completes.
func (c *Comm) Irecv(buf any, source, tag int) (*Request, error) {
	if err := checkTag(tag, true); err != nil {
		return nil, err
	}
	return c.irecv(c.ctx, buf, source, tag)
}

// Probe waits for a message matching (source, tag) and returns its status without
// receiving it (MPI_Probe), so a program can allocate a buffer of Status.Count
// elements of Status.Datatype first.
func (c *Comm) Probe(ctx context.Context, source, tag int) (Status, error) {
	if err := c.checkSource(source); err != nil {
		return Status{}, err
	}
	if err := checkTag(tag, true); err != nil {
		return Status{}, err
	}
	st, _, err := c.w.eng.probe(ctx, c.ctx, source, tag, c.slotOf(source), true)
	return st, err
}

// Iprobe reports without blocking whether a message matching (source, tag) is waiting
// (MPI_Iprobe), and its status if so.
func (c *Comm) Iprobe(source, tag int) (Status, bool, error) {
	if err := c.checkSource(source); err != nil {
		return Status{}, false, err
	}
	if err := checkTag(tag, true); err != nil {
		return Status{}, false, err
	}
	return c.w.eng.probe(context.Background(), c.ctx, source, tag, c.slotOf(source), false)
}

// Sendrecv sends sendbuf to dest and receives into recvbuf from source (MPI_Sendrecv):
// the exchange step of shifts and halo swaps, safe whatever the partners do because
// the receive is posted before the send.
func (c *Comm) Sendrecv(ctx context.Context, sendbuf any, dest, sendtag int, recvbuf any, source, recvtag int) (Status, error) {
	if err := checkTag(sendtag, false); err != nil {
		return Status{}, err
	}
	if err := checkTag(recvtag, true); err != nil {
		return Status{}, err
	}
	return c.sendrecv(ctx, c.ctx, sendbuf, dest, sendtag, recvbuf, source, recvtag)
}

func (c *Comm) sendrecv(ctx context.Context, id uint32, sendbuf any, dest, sendtag int, recvbuf any, source, recvtag int) (Status, error) {
	r, err := c.irecv(id, recvbuf, source, recvtag)
	if err != nil {
		return Status{}, err
	}
	if err := c.send(ctx, id, sendbuf, dest, sendtag, false); err != nil {
		c.cancel(r)
		return Status{}, err
	}
	return c.wait(ctx, r)
}

// send is Send on context id; sync makes it an Ssend.
func (c *Comm) send(ctx context.Context, id uint32, buf any, dest, tag int, sync bool) error {
	if dest < 0 || dest >= c.Size() {
		return fmt.Errorf("%w: mpj: send to rank %d of a communicator of %d", ipl.ErrInvalidArgument, dest, c.Size())
	}
	pb, err := p2pBuf(buf)
	if err != nil {
		return err
	}
	if err := pb.encode(pb.n); err != nil {
		return err
	}
	h := header{kind: kindData, dtype: pb.dtype, ctx: id, src: int32(c.rank), tag: int32(tag),
		from: int32(c.w.slot), count: int64(pb.n), elem: pb.elem}
	if err := c.w.eng.departed(c.slots[dest]); err != nil {
		return fmt.Errorf("mpj: send to rank %d: %w", dest, err)
	}
	var acked chan error
	if sync {
		if h.syncID, acked, err = c.w.newSync(c.slots[dest]); err != nil {
			return err
		}
	}
	if err := c.w.transmit(ctx, c.slots[dest], h, &pb); err != nil {
		if sync {
			c.w.dropSync(h.syncID)
		}
		if ctx.Err() != nil { // ended by the caller (Ctrl-C, a timeout): say that, not which port
			return ctxErr(ctx, fmt.Sprintf("send to rank %d", dest))
		}
		return fmt.Errorf("mpj: send to rank %d: %w", dest, err)
	}
	if !sync {
		return nil
	}
	select {
	case err := <-acked:
		return err
	case <-ctx.Done():
		c.w.dropSync(h.syncID)
		return ctxErr(ctx, fmt.Sprintf("Ssend to rank %d waiting for its receive", dest))
	}
}

// irecv posts a receive on context id; it completes at once if a queued message
// matches.
func (c *Comm) irecv(id uint32, buf any, source, tag int) (*Request, error) {
	if err := c.checkSource(source); err != nil {
		return nil, err
	}
	pb, err := p2pBuf(buf)
	if err != nil {
		return nil, err
	}
	op := &recvOp{ctx: id, src: source, tag: tag, slot: c.slotOf(source), buf: pb, req: newRequest()}
	op.req.op = op
	m, err := c.w.eng.post(op)
	if err != nil {
		return nil, err
	}
	if m != nil {
		c.w.eng.take(op, m)
	}
	return op.req, nil
}

// recv is Recv on context id.
func (c *Comm) recv(ctx context.Context, id uint32, buf any, source, tag int) (Status, error) {
	if err := checkTag(tag, true); err != nil {
		return Status{}, err
	}
	r, err := c.irecv(id, buf, source, tag)
	if err != nil {
		return Status{}, err
	}
	return c.wait(ctx, r)
}

// wait waits for a receive; if ctx ends first the receive is withdrawn, so that a
// later message does not land in a buffer the caller has taken back.
func (c *Comm) wait(ctx context.Context, r *Request) (Status, error) {
	st, err := r.Wait(ctx)
	if err != nil && ctx.Err() != nil && !c.cancel(r) {
		return r.Wait(context.Background()) // matched meanwhile: the payload is arriving
	}
	return st, err
}

// cancel withdraws a posted receive; false if a message matched it already.
func (c *Comm) cancel(r *Request) bool {
	return r.op == nil || c.w.eng.unpost(r.op)
}

// slotOf returns the world slot of a rank, -1 for AnySource.
func (c *Comm) slotOf(rank int) int {
	if rank == AnySource {
		return -1
	}
	return c.slots[rank]
}

func (c *Comm) checkSource(source int) error {
	if source != AnySource && (source < 0 || source >= c.Size()) {
		return fmt.Errorf("%w: mpj: receive from rank %d of a communicator of %d", ipl.ErrInvalidArgument, source, c.Size())
	}
	return nil
}

func checkTag(tag int, wildcard bool) error {
	if (tag < 0 || tag > MaxTag) && (!wildcard || tag != AnyTag) {
		return fmt.Errorf("%w: mpj: tag %d (want 0..%d)", ipl.ErrInvalidArgument, tag, MaxTag)
	}
	return nil
}
