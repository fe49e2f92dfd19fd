package conformance

import (
	"errors"
	"fmt"

	"github.com/ibisgo/ibis/ipl"
)

// Cancelled messages: one cancelled before any of it went out never arrives; one
// cancelled after a Send arrives cut short (a read past what came fails with
// ErrTypeMismatch, and the connection goes on); the message after each arrives whole.
var _ = register(&testCase{
	name:     "cancel",
	children: 1,
	parent: func(e *Env) {
		t := e.T
		ack, sp := sendToChild(e)
		steps := []struct {
			write func(ipl.WriteMessage) error
			end   func(ipl.WriteMessage) error
		}{
			{func(m ipl.WriteMessage) error { return m.WriteInt64(1) }, ipl.WriteMessage.Cancel},
			{func(m ipl.WriteMessage) error { return m.WriteInt64(2) }, finish},
			{func(m ipl.WriteMessage) error { return errors.Join(m.WriteInt64(3), m.Send(), m.WriteInt64(4)) }, ipl.WriteMessage.Cancel},
			{func(m ipl.WriteMessage) error { return m.WriteInt64(5) }, finish},
		}
		for i, s := range steps {
			m, err := sp.NewMessage(e.Ctx)
			if err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			if err := errors.Join(s.write(m), s.end(m)); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
		}
		waitAck(e, ack)
	},
	child: func(e *Env) error {
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, OneToOne, "in")
		if err != nil {
			return err
		}
		defer rp.Close()
		want := []struct {
			v     int64
			short bool // cut short after v
		}{{2, false}, {3, true}, {5, false}}
		for _, w := range want {
			if err := receiveOne(e, rp, func(m ipl.ReadMessage) error {
				if v, err := m.ReadInt64(); err != nil || v != w.v {
					return fmt.Errorf("read %d, %v; want %d", v, err, w.v)
				}
				if !w.short {
					return nil
				}
				if v, err := m.ReadInt64(); !errors.Is(err, ipl.ErrTypeMismatch) {
					return fmt.Errorf("the message cut short after %d: read %d, %v; want ErrTypeMismatch", w.v, v, err)
				}
				return nil
			}); err != nil {
				return err
			}
		}
		return sendOne(e, OneToOne, e.Parent, "ack", func(ipl.WriteMessage) error { return nil })
	},
})

// finish is Finish without its byte count.
func finish(m ipl.WriteMessage) error {
	_, err := m.Finish()
	return err
}
