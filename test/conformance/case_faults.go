package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

const lossMessages = 200

// A multicast receiver killed halfway: the send port reports the lost connection, and
// the receivers that are still there get every message whole and in order, none merged
// with the next.
var _ = register(&testCase{
	name:     "multicast-lost-receiver",
	kills:    true,
	children: 3,
	parent: func(e *Env) {
		t := e.T
		sp := multicastSender(e)
		defer sp.Close()
		data := make([]float64, 10000)
		for i := range lossMessages {
			if i == lossMessages/4 {
				e.Kill(2)
			}
			m, err := sp.NewMessage(e.Ctx)
			if err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			data[0], data[len(data)-1] = float64(i), float64(-i)
			if err := m.WriteInt32(int32(i)); err != nil {
				t.Fatal(err)
			}
			// A lost receiver makes Send report it; the message goes on for the others.
			serr := m.Send()
			werr := m.WriteArray(data)
			_, ferr := m.Finish()
			for _, err := range []error{serr, werr, ferr} {
				if err != nil && !errors.Is(err, ipl.ErrConnectionLost) {
					t.Fatalf("message %d: %v", i, err)
				}
				// The loss names the connection: the one to the killed receiver.
				var ce *ipl.ConnectionError
				if err != nil && (!errors.As(err, &ce) || ce.To.Ibis.ID != e.Children[2].ID || ce.From != sp.Identifier()) {
					t.Fatalf("message %d: %v does not name the connection to %v", i, err, e.Children[2])
				}
			}
		}
		lost, err := sp.LostConnections()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lost {
			if l.Ibis.ID != e.Children[2].ID {
				t.Errorf("lost a live receiver %v", l)
			}
		}
		if got := len(sp.ConnectedTo()); got != 2 && got != 3 {
			t.Errorf("ConnectedTo has %d ports", got)
		}
		// Once the death is known, the dead receiver is gone from the port.
		if err := waitEvent(e, ipl.EventDied, e.Children[2]); err != nil {
			t.Fatal(err)
		}
		if got := len(sp.ConnectedTo()); got != 2 {
			t.Errorf("after the Died event ConnectedTo has %d ports, want 2", got)
		}
		// Only now may the live receivers close their ports: a receiver that leaves is
		// a lost connection too, and would race with the checks above.
		if err := e.Ibis.Registry().Signal(e.Ctx, "checked", e.Children[0], e.Children[1]); err != nil {
			t.Fatal(err)
		}
	},
	child: func(e *Env) error {
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, OneToMany, "mc")
		if err != nil {
			return err
		}
		defer rp.Close()
		data := make([]float64, 10000)
		for i := range lossMessages {
			m, err := rp.Receive(e.Ctx)
			if err != nil {
				return fmt.Errorf("message %d: %w", i, err)
			}
			v, err1 := m.ReadInt32()
			err2 := m.ReadArray(data)
			n, err3 := m.Finish()
			if err := errors.Join(err1, err2, err3); err != nil {
				return fmt.Errorf("message %d: %w", i, err)
			}
			if int(v) != i || data[0] != float64(i) || data[len(data)-1] != float64(-i) {
				return fmt.Errorf("message %d arrived as %d (array %g..%g, %d bytes)", i, v, data[0], data[len(data)-1], n)
			}
		}
		return waitSignal(e, "checked")
	},
})

// A direct (one-to-one, explicit-only) port: a Receive that times out leaves the stream
// intact, the next sender can connect once the first one closed, and the port reports
// who sent what.
var _ = register(&testCase{
	name:     "direct-port",
	children: 2,
	parent: func(e *Env) {
		t := e.T
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, Direct, "direct")
		if err != nil {
			t.Fatal(err)
		}
		defer rp.Close()
		ctx, cancel := context.WithTimeout(e.Ctx, 100*time.Millisecond)
		_, err = rp.Receive(ctx)
		cancel()
		if !errors.Is(err, ipl.ErrTimeout) {
			t.Errorf("receive before any sender: %v, want ErrTimeout", err)
		}
		if err := e.Ibis.Registry().Signal(e.Ctx, "go", e.Children[0]); err != nil {
			t.Fatal(err)
		}
		big := make([]int32, 300000)
		for i := range 3 {
			if i == 1 {
				// A Receive cancelled while the sender is between messages.
				ctx, cancel := context.WithTimeout(e.Ctx, time.Millisecond)
				if m, err := rp.Receive(ctx); err == nil {
					_, _ = m.Finish()
					t.Fatal("message 1 came before it was asked for")
				}
				cancel()
				if err := e.Ibis.Registry().Signal(e.Ctx, "more", e.Children[0]); err != nil {
					t.Fatal(err)
				}
			}
			m, err := rp.Receive(e.Ctx)
			if err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			v, _ := m.ReadInt32()
			err = m.ReadArray(big)
			if _, ferr := m.Finish(); err != nil || ferr != nil {
				t.Fatalf("message %d: %v %v", i, err, ferr)
			}
			if int(v) != i || big[0] != int32(i) || big[len(big)-1] != int32(i) {
				t.Fatalf("message %d arrived as %d", i, v)
			}
			if m.Origin().Ibis.ID != e.Children[0].ID {
				t.Errorf("message %d from %v", i, m.Origin())
			}
		}
		// The first sender has said goodbye (its Close returned) before the second
		// one tries: the port must take the second at once.
		if err := waitSignal(e, "closed"); err != nil {
			t.Fatal(err)
		}
		if err := e.Ibis.Registry().Signal(e.Ctx, "go", e.Children[1]); err != nil {
			t.Fatal(err)
		}
		m, err := rp.Receive(e.Ctx)
		if err != nil {
			t.Fatalf("message from the second sender: %v", err)
		}
		if m.Origin().Ibis.ID != e.Children[1].ID {
			t.Errorf("second sender's message from %v", m.Origin())
		}
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
		// Close while a Receive waits: it returns ErrClosed.
		done := make(chan error, 1)
		go func() { _, err := rp.Receive(e.Ctx); done <- err }()
		_ = rp.Close()
		if err := <-done; !errors.Is(err, ipl.ErrClosed) {
			t.Errorf("receive on a closed port: %v, want ErrClosed", err)
		}
	},
	child: func(e *Env) error {
		if err := waitSignal(e, "go"); err != nil {
			return err
		}
		sp, err := e.Ibis.CreateSendPort(Direct, "")
		if err != nil {
			return err
		}
		if err := sp.Connect(e.Ctx, e.Parent, "direct"); err != nil {
			return err
		}
		count := 3
		if e.Index == 1 {
			count = 1
		}
		big := make([]int32, 300000)
		for i := range count {
			if e.Index == 0 && i == 1 {
				if err := waitSignal(e, "more"); err != nil {
					return err
				}
			}
			m, err := sp.NewMessage(e.Ctx)
			if err != nil {
				return err
			}
			big[0], big[len(big)-1] = int32(i), int32(i)
			_ = m.WriteInt32(int32(i))
			_ = m.WriteArray(big)
			if _, err := m.Finish(); err != nil {
				return err
			}
		}
		if err := sp.Close(); err != nil {
			return err
		}
		if e.Index == 0 {
			return e.Ibis.Registry().Signal(e.Ctx, "closed", e.Parent)
		}
		return nil
	},
})
