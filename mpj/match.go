package mpj

import (
	"context"
	"fmt"
	"sync"

	"github.com/ibisgo/ibis/ipl"
)

// message is one that arrived before a receive matched it: its header and its
// payload, read into memory the queue owns.
type message struct {
	h    header
	data any
	// err: the message came cut short (its sender's Send failed after part of it went
	// out); the receive that matches it fails with err.
	err error
}

// recvOp is a posted receive: what it matches and where the payload goes.
type recvOp struct {
	ctx      uint32
	src, tag int
	// slot is the world slot of src, -1 for AnySource: a departure of that process
	// fails the receive.
	slot int
	buf  pbuf
	req  *Request
}

// matches reports whether a message with header h satisfies the receive (src, tag):
// the MPI matching rule, with wildcards.
func matches(src, tag int, h *header) bool {
	return (src == AnySource || src == int(h.src)) && (tag == AnyTag || tag == int(h.tag))
}

// engine matches incoming messages with receives, per context id. Messages that come
// before their receive wait in the unexpected queue, receives that come before their
// message wait in the posted queue; both queues are FIFO, and one goroutine (the
// dispatcher) feeds messages in the order each connection delivers them, which gives
// MPI's non-overtaking rule per (sender, communicator, tag). Queues are kept per
// context id and created on first use, because a peer may send on a communicator
// this process has not finished creating yet.
type engine struct {
	mu         sync.Mutex
	unexpected map[uint32][]*message
	posted     map[uint32][]*recvOp
	// arrived is closed (and replaced) whenever a message joins an unexpected queue or
	// the engine fails, to wake Probe.
	arrived chan struct{}
	err     error
	// gone holds, by world slot, why a peer that closed its world (without a broken
	// connection: Close instead of Finalize, or after it) can send no more.
	gone map[int]error
	// ack sends the acknowledgement of a matched Ssend; it must not block.
	ack func(h header)
}

func newEngine(ack func(h header)) *engine {
	return &engine{unexpected: map[uint32][]*message{}, posted: map[uint32][]*recvOp{},
		arrived: make(chan struct{}), gone: map[int]error{}, ack: ack}
}

// takePosted removes and returns the oldest posted receive that h matches, or nil.
func (e *engine) takePosted(h *header) (*recvOp, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return nil, e.err
	}
	return e.takePostedLocked(h), nil
}

func (e *engine) takePostedLocked(h *header) *recvOp {
	q := e.posted[h.ctx]
	for i, op := range q {
		if matches(op.src, op.tag, h) {
			e.posted[h.ctx] = append(q[:i:i], q[i+1:]...)
			if len(e.posted[h.ctx]) == 0 {
				delete(e.posted, h.ctx)
			}
			return op
		}
	}
	return nil
}

// deliver hands a buffered message to the oldest matching posted receive, or queues it
// as unexpected.
func (e *engine) deliver(m *message) {
	e.mu.Lock()
	if e.err != nil {
		e.mu.Unlock()
		return
	}
	if op := e.takePostedLocked(&m.h); op != nil {
		e.mu.Unlock()
		e.take(op, m)
		return
	}
	e.unexpected[m.h.ctx] = append(e.unexpected[m.h.ctx], m)
	close(e.arrived)
	e.arrived = make(chan struct{})
	e.mu.Unlock()
}

// check says whether a message with header h fits the receive op, and why not.
func check(op *recvOp, h *header) error {
	if h.dtype != op.buf.dtype || h.elem != op.buf.elem {
		what := h.dtype.String()
		if h.dtype == Object {
			what = "objects of type " + h.elem
		}
		return fmt.Errorf("%w: mpj: message from rank %d with tag %d holds %s, the receive buffer is a %s",
			ipl.ErrTypeMismatch, h.src, h.tag, what, op.buf.kind())
	}
	if h.count > int64(op.buf.n) {
		return fmt.Errorf("%w: message from rank %d with tag %d holds %d elements, the receive buffer %d",
			ErrTruncated, h.src, h.tag, h.count, op.buf.n)
	}
	return nil
}

// take finishes op with a queued message, or with the error the message came with.
func (e *engine) take(op *recvOp, m *message) {
	if m.err != nil {
		e.finish(op, &m.h, m.err)
		return
	}
	e.complete(op, &m.h, m.data)
}

// complete finishes op with a buffered payload (nil when it was read into op.buf
// already, or when readErr says why it could not be).
func (e *engine) complete(op *recvOp, h *header, data any) {
	err := check(op, h)
	if err == nil && data != nil {
		err = op.buf.fill(data, int(h.count))
	}
	e.finish(op, h, err)
}

// finish completes op and acknowledges a synchronous send, whether or not the buffer
// fitted: the message was matched, which is what Ssend waits for.
func (e *engine) finish(op *recvOp, h *header, err error) {
	if h.syncID != 0 {
		e.ack(*h)
	}
	op.req.finish(h.status(), err)
}

// post matches a new receive against the unexpected queue, or queues it. It returns
// the matched message, or nil when op was posted.
func (e *engine) post(op *recvOp) (*message, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return nil, e.err
	}
	q := e.unexpected[op.ctx]
	for i, m := range q {
		if matches(op.src, op.tag, &m.h) {
			e.unexpected[op.ctx] = append(q[:i:i], q[i+1:]...)
			if len(e.unexpected[op.ctx]) == 0 {
				delete(e.unexpected, op.ctx)
			}
			return m, nil
		}
	}
	if err := e.gone[op.slot]; op.slot >= 0 && err != nil {
		return nil, err
	}
	e.posted[op.ctx] = append(e.posted[op.ctx], op)
	return nil, nil
}

// depart records that the process in slot has closed its world: every message it sent
// has been delivered (its connection ended after them), so posted receives from it
// that are still waiting can never complete and fail with err, as do later receives
// from it that no queued message matches. Receives from AnySource stay: another rank
// may still send.
func (e *engine) depart(slot int, err error) {
	e.mu.Lock()
	if e.err != nil || e.gone[slot] != nil {
		e.mu.Unlock()
		return
	}
	e.gone[slot] = err
	var failed []*recvOp
	for id, q := range e.posted {
		kept := q[:0:0]
		for _, op := range q {
			if op.slot == slot {
				failed = append(failed, op)
			} else {
				kept = append(kept, op)
			}
		}
		if len(kept) == 0 {
			delete(e.posted, id)
		} else {
			e.posted[id] = kept
		}
	}
	close(e.arrived) // wakes a Probe waiting for it
	e.arrived = make(chan struct{})
	e.mu.Unlock()
	for _, op := range failed {
		op.req.finish(Status{}, err)
	}
}

// departed returns why the process in slot can send no more, nil while it can.
func (e *engine) departed(slot int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gone[slot]
}

// unpost removes op from the posted queue; false means a message has matched it
// already (and its request completes soon).
func (e *engine) unpost(op *recvOp) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	q := e.posted[op.ctx]
	for i, o := range q {
		if o == op {
			e.posted[op.ctx] = append(q[:i:i], q[i+1:]...)
			if len(e.posted[op.ctx]) == 0 {
				delete(e.posted, op.ctx)
			}
			return true
		}
	}
	return false
}

// probe returns the status of the oldest unexpected message matching (src, tag) in
// context ctxID; with wait it waits for one until ctx ends, or until the process in
// slot (src's, -1 for AnySource) has departed.
func (e *engine) probe(ctx context.Context, ctxID uint32, src, tag, slot int, wait bool) (Status, bool, error) {
	for {
		e.mu.Lock()
		if e.err != nil {
			e.mu.Unlock()
			return Status{}, false, e.err
		}
		for _, m := range e.unexpected[ctxID] {
			if matches(src, tag, &m.h) {
				e.mu.Unlock()
				return m.h.status(), true, nil
			}
		}
		ch := e.arrived
		gone := e.gone[slot]
		e.mu.Unlock()
		if wait && slot >= 0 && gone != nil {
			return Status{}, false, gone
		}
		if !wait {
			return Status{}, false, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return Status{}, false, ctxErr(ctx, "probe")
		}
	}
}

// fail ends the engine: every posted receive completes with err, and every later
// operation fails with it. The first failure wins.
func (e *engine) fail(err error) {
	e.mu.Lock()
	if e.err != nil {
		e.mu.Unlock()
		return
	}
	e.err = err
	posted := e.posted
	e.posted = map[uint32][]*recvOp{}
	e.unexpected = map[uint32][]*message{}
	close(e.arrived)
	e.mu.Unlock()
	for _, q := range posted {
		for _, op := range q {
			op.req.finish(Status{}, err)
		}
	}
}

// failure returns the engine's error, nil while it works.
func (e *engine) failure() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}
