package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// waitSignal reads registry events until the named signal arrives.
func waitSignal(e *Env, name string) error {
	for {
		select {
		case ev, ok := <-e.Ibis.Registry().Events():
			if !ok {
				return fmt.Errorf("events ended before signal %q", name)
			}
			if ev.Type == ipl.EventSignal && ev.Name == name {
				return nil
			}
		case <-e.Ctx.Done():
			return fmt.Errorf("waiting for signal %q: %w", name, e.Ctx.Err())
		}
	}
}

// waitEvent reads registry events until one of type typ about member arrives.
func waitEvent(e *Env, typ ipl.EventType, member ipl.IbisIdentifier) error {
	for {
		select {
		case ev, ok := <-e.Ibis.Registry().Events():
			if !ok {
				return fmt.Errorf("events ended before %s of %s", typ, member)
			}
			if ev.Type == typ && ev.Member.ID == member.ID {
				return nil
			}
		case <-e.Ctx.Done():
			return fmt.Errorf("waiting for %s of %s: %w", typ, member, e.Ctx.Err())
		}
	}
}

// sendOne connects a fresh send port of type pt to (to, port), sends what fill
// writes, and closes the port.
func sendOne(e *Env, pt ipl.PortType, to ipl.IbisIdentifier, port string, fill func(ipl.WriteMessage) error) error {
	sp, err := e.Ibis.CreateSendPort(pt, "")
	if err != nil {
		return err
	}
	defer sp.Close()
	if err := sp.Connect(e.Ctx, to, port); err != nil {
		return err
	}
	m, err := sp.NewMessage(e.Ctx)
	if err != nil {
		return err
	}
	if err := fill(m); err != nil {
		return err
	}
	_, err = m.Finish()
	return err
}

// receiveOne creates a receive port, takes one message and hands it to check.
func receiveOne(e *Env, rp ipl.ReceivePort, check func(ipl.ReadMessage) error) error {
	m, err := rp.Receive(e.Ctx)
	if err != nil {
		return err
	}
	if err := check(m); err != nil {
		_, _ = m.Finish()
		return err
	}
	_, err = m.Finish()
	return err
}

// isChild reports whether id is one of the case's children.
func isChild(e *Env, id ipl.IbisIdentifier) bool {
	for _, c := range e.Children {
		if c.Pool == id.Pool && c.ID == id.ID {
			return true
		}
	}
	return false
}

// multicastSender makes the parent's one-to-many port "mc" and connects it to the port
// "mc" of every child.
func multicastSender(e *Env) ipl.SendPort {
	t := e.T
	t.Helper()
	sp, err := e.Ibis.CreateSendPort(OneToMany, "mc")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range e.Children {
		if err := sp.Connect(e.Ctx, c, "mc"); err != nil {
			_ = sp.Close()
			t.Fatalf("connect to %v: %v", c, err)
		}
	}
	return sp
}

// senderAfterGo waits for the parent's "go", then makes a send port of type pt and
// connects it to the parent's port; the caller closes it.
func senderAfterGo(e *Env, pt ipl.PortType, port string) (ipl.SendPort, error) {
	if err := waitSignal(e, "go"); err != nil {
		return nil, err
	}
	sp, err := e.Ibis.CreateSendPort(pt, "")
	if err != nil {
		return nil, err
	}
	if err := sp.Connect(e.Ctx, e.Parent, port); err != nil {
		_ = sp.Close()
		return nil, err
	}
	return sp, nil
}

// connectMissing connects sp to a port of to that does not exist (yet), for a short
// while, and returns the error: a timeout whose last answer is ipl.ErrNoSuchPort. On a
// machine so slow that not even one handshake answer came within the second, it tries
// once more with ten: what is checked is the answer, not the machine's speed.
func connectMissing(e *Env, sp ipl.SendPort, to ipl.IbisIdentifier, port string) error {
	var err error
	for _, d := range []time.Duration{time.Second, 10 * time.Second} {
		ctx, cancel := context.WithTimeout(e.Ctx, d)
		err = sp.Connect(ctx, to, port)
		cancel()
		if !errors.Is(err, ipl.ErrTimeout) || errors.Is(err, ipl.ErrNoSuchPort) {
			return err
		}
	}
	return err
}

// sendToChild gives the parent a receive port "ack" for the child's acknowledgement
// and a one-to-one send port connected to the child's port "in"; both close with the
// case.
func sendToChild(e *Env) (ack ipl.ReceivePort, sp ipl.SendPort) {
	t := e.T
	t.Helper()
	ack, err := e.Ibis.CreateReceivePort(e.Ctx, OneToOne, "ack")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ack.Close() })
	if sp, err = e.Ibis.CreateSendPort(OneToOne, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sp.Close() })
	if err := sp.Connect(e.Ctx, e.Children[0], "in"); err != nil {
		t.Fatal(err)
	}
	return ack, sp
}

// waitAck waits for the child's empty message on the parent's port ack (sendToChild):
// the child has checked what it was sent.
func waitAck(e *Env, ack ipl.ReceivePort) {
	e.T.Helper()
	if err := receiveOne(e, ack, func(ipl.ReadMessage) error { return nil }); err != nil {
		e.T.Fatalf("the child's acknowledgement: %v", err)
	}
}
