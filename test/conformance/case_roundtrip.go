package conformance

import (
	"fmt"

	"github.com/ibisgo/ibis/ipl"
)

// Every type crosses the process boundary both ways, a large slice among them, and
// the message reports its origin and size.
var _ = register(&testCase{
	name:     "roundtrip",
	children: 1,
	parent: func(e *Env) {
		t := e.T
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, OneToOne, "in")
		if err != nil {
			t.Fatal(err)
		}
		defer rp.Close()
		m, err := rp.Receive(e.Ctx)
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		if m.Origin().Ibis.ID != e.Children[0].ID {
			t.Errorf("origin %v, want child %v", m.Origin(), e.Children[0])
		}
		if err := readPayload(m, makePayload(1, true)); err != nil {
			t.Errorf("payload from child: %v", err)
		}
		n, err := m.Finish()
		if err != nil || n < 1<<20 {
			t.Errorf("finish: %d bytes, %v; want at least 1 MiB", n, err)
		}
		if err := sendOne(e, OneToOne, e.Children[0], "in", func(w ipl.WriteMessage) error {
			return writePayload(w, makePayload(2, false))
		}); err != nil {
			t.Fatalf("reply: %v", err)
		}
	},
	child: func(e *Env) error {
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, OneToOne, "in")
		if err != nil {
			return err
		}
		defer rp.Close()
		var sent int64
		if err := sendOne(e, OneToOne, e.Parent, "in", func(w ipl.WriteMessage) error {
			if err := writePayload(w, makePayload(1, true)); err != nil {
				return err
			}
			sent = w.Bytes()
			return nil
		}); err != nil {
			return fmt.Errorf("send: %w", err)
		}
		if sent < 1<<20 {
			return fmt.Errorf("Bytes() = %d before finish, want at least 1 MiB", sent)
		}
		return receiveOne(e, rp, func(m ipl.ReadMessage) error { return readPayload(m, makePayload(2, false)) })
	},
})
