package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// lateMessages is how many messages the parent multicasts to the receiver that is
// there while its Connect to the late one waits.
const lateMessages = 20

// sendWait bounds one NewMessage of the late-receiver case. A free port answers at
// once; the bound only turns the old behaviour (NewMessage waiting for as long as the
// Connect to the missing port retries) into a failure instead of a hang.
const sendWait = 30 * time.Second

// A one-to-many send port whose Connect to a receive port that does not exist yet is
// retrying keeps sending to the receivers it already has: the Connect does not hold the
// port while it waits. Two Connects to the same port at once make one connection (the
// other is told it is already connected), and a Connect still waiting when its port
// closes ends with ErrClosed and leaves no connection behind.
var _ = register(&testCase{
	name:     "connect-late-receiver",
	children: 2,
	parent: func(e *Env) {
		t := e.T
		early, late := e.Children[0], e.Children[1]
		sp, err := e.Ibis.CreateSendPort(OneToMany, "late-mc")
		if err != nil {
			t.Fatal(err)
		}
		defer sp.Close()
		if err := sp.Connect(e.Ctx, early, "early"); err != nil {
			t.Fatalf("connect to the early receiver: %v", err)
		}

		// Two Connects to the late receiver's port, which does not exist yet.
		results := make(chan error, 2)
		started := make(chan struct{}, 2)
		for range 2 {
			go func() {
				started <- struct{}{}
				results <- sp.Connect(e.Ctx, late, "late")
			}()
		}
		<-started
		<-started

		send := func(v int32) {
			t.Helper()
			ctx, cancel := context.WithTimeout(e.Ctx, sendWait)
			defer cancel()
			m, err := sp.NewMessage(ctx)
			if err != nil {
				t.Fatalf("message %d while a Connect waits for a receive port that does not exist yet: %v", v, err)
			}
			if err := m.WriteInt32(v); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Finish(); err != nil {
				t.Fatalf("finish message %d: %v", v, err)
			}
		}
		// The first message, then the early receiver's word that it has it: by then the
		// Connects have long been retrying, whichever went first.
		send(0)
		if err := waitSignal(e, "got-0"); err != nil {
			t.Fatal(err)
		}
		for v := int32(1); v < lateMessages; v++ {
			send(v)
		}
		if err := waitSignal(e, "got-all"); err != nil {
			t.Fatal(err)
		}

		// Now the late port appears: one Connect makes the connection, the other finds it.
		if err := e.Ibis.Registry().Signal(e.Ctx, "create", late); err != nil {
			t.Fatal(err)
		}
		var ok, already int
		for range 2 {
			select {
			case err := <-results:
				switch {
				case err == nil:
					ok++
				case errors.Is(err, ipl.ErrAlreadyConnected):
					already++
				default:
					t.Errorf("connect to the late receiver: %v", err)
				}
			case <-e.Ctx.Done():
				t.Fatal("the Connects to the late receiver did not end")
			}
		}
		if ok != 1 || already != 1 {
			t.Errorf("two Connects to one port: %d connected and %d already connected, want 1 and 1", ok, already)
		}
		if got := len(sp.ConnectedTo()); got != 2 {
			t.Errorf("ConnectedTo has %d ports, want 2", got)
		}
		send(-1) // to both

		// A Connect still waiting when its port closes ends with ErrClosed.
		sp2, err := e.Ibis.CreateSendPort(OneToMany, "closing")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- sp2.Connect(e.Ctx, late, "never") }()
		if err := sp2.Close(); err != nil {
			t.Errorf("close a port whose Connect waits: %v", err)
		}
		select {
		case err := <-done:
			if !errors.Is(err, ipl.ErrClosed) {
				t.Errorf("Connect of a port closed meanwhile: %v, want ErrClosed", err)
			}
		case <-e.Ctx.Done():
			t.Fatal("a waiting Connect did not end when its port closed")
		}
		if got := len(sp2.ConnectedTo()); got != 0 {
			t.Errorf("a closed port has %d connections", got)
		}
		// Only now may the late receiver's process end: the Connect above must meet a
		// live instance without the port, not a refused dial.
		if err := e.Ibis.Registry().Signal(e.Ctx, "done", late); err != nil {
			t.Fatal(err)
		}
	},
	child: func(e *Env) error {
		if e.Index == 1 {
			if err := waitSignal(e, "create"); err != nil {
				return err
			}
			rp, err := e.Ibis.CreateReceivePort(e.Ctx, OneToMany, "late")
			if err != nil {
				return err
			}
			defer rp.Close()
			// The late receiver gets the messages sent once it is connected: the last.
			if err := receiveInt32(e, rp, -1); err != nil {
				return err
			}
			return waitSignal(e, "done")
		}
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, OneToMany, "early")
		if err != nil {
			return err
		}
		defer rp.Close()
		for v := int32(0); v < lateMessages; v++ {
			if err := receiveInt32(e, rp, v); err != nil {
				return err
			}
			if v == 0 {
				if err := e.Ibis.Registry().Signal(e.Ctx, "got-0", e.Parent); err != nil {
					return err
				}
			}
		}
		if err := e.Ibis.Registry().Signal(e.Ctx, "got-all", e.Parent); err != nil {
			return err
		}
		return receiveInt32(e, rp, -1)
	},
})

// receiveInt32 takes one message from rp and checks that it holds just want.
func receiveInt32(e *Env, rp ipl.ReceivePort, want int32) error {
	return receiveOne(e, rp, func(m ipl.ReadMessage) error {
		v, err := m.ReadInt32()
		if err != nil {
			return err
		}
		if v != want {
			return fmt.Errorf("got message %d, want %d", v, want)
		}
		return nil
	})
}
