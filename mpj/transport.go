package mpj

import (
	"context"
	"errors"
	"fmt"

	"github.com/ibisgo/ibis/internal/wake"
	"github.com/ibisgo/ibis/ipl"
)

// dispatch drains the receive port until the world closes. It never waits for the
// program: a message that matches a posted receive is read straight into that
// receive's buffer, any other is read into a buffer of its own and queued. So one slow
// receiver never stops the port, and large messages cannot deadlock it; the price is
// that unexpected messages occupy memory until received (bounded by what the program
// sends ahead of its receives).
func (w *World) dispatch() {
	defer w.wg.Done()
	for {
		m, err := w.rp.Receive(w.life)
		if err != nil {
			if !w.closing.Load() {
				w.fail(fmt.Errorf("mpj: receiving: %w", err))
			}
			return
		}
		if err := w.handle(m); err != nil {
			if !w.closing.Load() {
				w.fail(fmt.Errorf("mpj: receiving from %s: %w", m.Origin().Ibis, err))
			}
			return
		}
	}
}

// handle reads one message and gives it to its receive, or to the unexpected queue.
func (w *World) handle(m ipl.ReadMessage) error {
	var h header
	if err := h.read(m); err != nil {
		_, _ = m.Finish()
		return err
	}
	if h.kind == kindAck {
		_, err := m.Finish()
		w.acked(h.syncID)
		return err
	}
	op, err := w.eng.takePosted(&h)
	if err != nil { // the world failed: drop it
		_, ferr := m.Finish()
		return ferr
	}
	if op != nil && op.buf.dtype == Object {
		// Objects are decoded only once the message is read, by complete, so that a value
		// that does not decode into the receive's type fails that receive alone.
		data, err := readUnexpected(m, &h)
		if err != nil {
			_, _ = m.Finish()
			op.req.finish(h.status(), fmt.Errorf("mpj: reading a message: %w", err))
			return fatalRead(err)
		}
		_, ferr := m.Finish()
		w.eng.complete(op, &h, data)
		return ferr
	}
	if op != nil {
		cerr := check(op, &h)
		if cerr == nil && h.count > 0 {
			if err := op.buf.read(m, int(h.count)); err != nil {
				_, _ = m.Finish()
				op.req.finish(h.status(), fmt.Errorf("mpj: reading a message: %w", err))
				return fatalRead(err)
			}
		}
		_, ferr := m.Finish() // skips the payload of a message that did not fit
		w.eng.finish(op, &h, cerr)
		return ferr
	}
	data, err := readUnexpected(m, &h)
	if err != nil {
		_, _ = m.Finish() // (a broken stream is reported as a lost connection)
		if ferr := fatalRead(err); ferr != nil {
			return ferr
		}
		// Cut short: queued with its error, so that the receive that takes it fails,
		// as a receive posted before it came does.
		w.eng.deliver(&message{h: h, err: fmt.Errorf("mpj: reading a message: %w", err)})
		return nil
	}
	// Delivered before Finish: once the message is finished the connection may end
	// (the peer closed), and its departure must find the message queued.
	w.eng.deliver(&message{h: h, data: data})
	_, err = m.Finish()
	return err
}

// fatalRead returns err, a failed read of a message's payload, unless it fails only that
// message: one cut short, as a sender's Cancel leaves a message of rows of which some went
// out before one was over the limit (ipl.ErrTypeMismatch; the stream goes on). Then the
// receive it matched has the error, and the dispatcher goes on.
func fatalRead(err error) error {
	if errors.Is(err, ipl.ErrTypeMismatch) {
		return nil
	}
	return err
}

// readUnexpected reads the payload of a message no receive waits for into memory of its
// own: a 1-D slice of its element type (whatever shape the sender's buffer had), or the
// encoding of objects.
func readUnexpected(m ipl.ReadMessage, h *header) (any, error) {
	if h.count == 0 {
		return nil, nil
	}
	if h.dtype == Object {
		return readObjectBytes(m)
	}
	data := makeBuf(h.dtype, int(h.count))
	return data, m.ReadArray(data)
}

// transmit sends one message to the process in slot s, or queues it locally when s is
// this process (a copy, so the caller may reuse its buffer at once, as after any Send).
// buf is nil for an ack.
func (w *World) transmit(ctx context.Context, s int, h header, buf *pbuf) error {
	if s == w.slot {
		if h.kind == kindAck {
			w.acked(h.syncID)
			return nil
		}
		if err := w.eng.failure(); err != nil {
			return err
		}
		var data any
		if h.count > 0 {
			var err error
			if data, err = buf.detach(int(h.count)); err != nil {
				return err
			}
		}
		w.eng.deliver(&message{h: h, data: data})
		return nil
	}
	m, err := w.ports[s].NewMessage(ctx)
	if err != nil {
		return err
	}
	err = h.write(m)
	if err == nil && h.count > 0 {
		err = buf.write(m, int(h.count))
	}
	if err != nil {
		// A header without its data would break the receiver's dispatcher: the
		// message goes nowhere (Cancel), and only this Send fails.
		return errors.Join(err, m.Cancel())
	}
	_, err = m.Finish()
	return err
}

// newSync registers an Ssend waiting for its ack.
// to the process in slot.
func (w *World) newSync(slot int) (int64, chan error, error) {
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	if w.syncErr != nil {
		return 0, nil, w.syncErr
	}
	w.syncNext++
	ch := make(chan error, 1)
	w.syncWait[w.syncNext] = syncWaiter{ch: ch, slot: slot}
	return w.syncNext, ch, nil
}

// syncWaiter is an Ssend waiting for its ack from the process in slot.
type syncWaiter struct {
	ch   chan error
	slot int
}

// dropSync forgets an Ssend that stopped waiting.
func (w *World) dropSync(id int64) {
	w.syncMu.Lock()
	delete(w.syncWait, id)
	w.syncMu.Unlock()
}

// acked releases the Ssend with the given id.
func (w *World) acked(id int64) {
	w.syncMu.Lock()
	sw, ok := w.syncWait[id]
	delete(w.syncWait, id)
	w.syncMu.Unlock()
	if ok {
		sw.ch <- nil
	}
}

// queueAck asks the ack sender to acknowledge a matched Ssend. It never blocks: it is
// called by the dispatcher, which must not wait for the network (two dispatchers each
// writing an ack to the other, neither reading, could deadlock).
func (w *World) queueAck(h header) {
	w.ackMu.Lock()
	w.acks = append(w.acks, header{kind: kindAck, syncID: h.syncID, from: h.from})
	w.ackMu.Unlock()
	wake.Poke(w.ackWake)
}

// ackLoop sends queued acks until the world closes.
func (w *World) ackLoop() {
	defer w.wg.Done()
	for {
		select {
		case <-w.life.Done():
			return
		case <-w.ackWake:
		}
		w.ackMu.Lock()
		acks := w.acks
		w.acks = nil
		w.ackMu.Unlock()
		for _, a := range acks {
			if a.from < 0 || int(a.from) >= len(w.ports) {
				continue // a corrupt header; its sender is not ours to find
			}
			if err := w.transmit(w.life, int(a.from), a, nil); err != nil && !w.closing.Load() {
				w.fail(fmt.Errorf("mpj: acknowledging a synchronous send: %w", err))
			}
		}
	}
}
