package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

type denyBad struct{}

func (denyBad) GotConnection(_ ipl.ReceivePort, from ipl.SendPortIdentifier) bool {
	return from.Name != "bad"
}
func (denyBad) LostConnection(ipl.ReceivePort, ipl.SendPortIdentifier, error) {}

// The connection rules: type mismatches name the differences; a missing port is
// retried until it appears or the time is up; double connections, a second sender on
// a one-to-one port, a second receiver for a one-to-one sender and refusals all fail
// with their own errors.
var _ = register(&testCase{
	name:     "connect-rules",
	children: 1,
	parent: func(e *Env) {
		t := e.T
		child := e.Children[0]
		want := func(what string, err error, target error, mention ...string) {
			t.Helper()
			if !errors.Is(err, target) {
				t.Errorf("%s: got %v, want %v", what, err, target)
				return
			}
			for _, s := range mention {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%s: error %q does not mention %q", what, err, s)
				}
			}
		}

		// The child's ports exist once it signals "ready".
		if err := waitSignal(e, "ready"); err != nil {
			t.Fatal(err)
		}
		sp1, _ := e.Ibis.CreateSendPort(ManyToOne, "mismatch")
		err := sp1.Connect(e.Ctx, child, "o2o")
		want("type mismatch", err, ipl.ErrTypeMismatch, ipl.ConnectionManyToOne, ipl.ConnectionOneToOne, ipl.CommunicationNumbered)

		// Port names: empty or longer than ipl.MaxPortName, refused where they are given
		// (a long name used to be taken, and every connect to it refused as a bad handshake).
		long := strings.Repeat("n", ipl.MaxPortName+1)
		_, err = e.Ibis.CreateReceivePort(e.Ctx, ManyToOne, "")
		want("receive port without a name", err, ipl.ErrInvalidArgument, "needs a name")
		_, err = e.Ibis.CreateReceivePort(e.Ctx, ManyToOne, long)
		want("receive port name too long", err, ipl.ErrInvalidArgument, "1025 bytes")
		_, err = e.Ibis.CreateSendPort(ManyToOne, long)
		want("send port name too long", err, ipl.ErrInvalidArgument, "1025 bytes")
		want("connect to no name", sp1.Connect(e.Ctx, child, ""), ipl.ErrInvalidArgument)
		want("connect to a name too long", sp1.Connect(e.Ctx, child, long), ipl.ErrInvalidArgument)
		want("connect to no global name", sp1.ConnectGlobal(e.Ctx, ""), ipl.ErrInvalidArgument)
		if rp, err := e.Ibis.CreateReceivePort(e.Ctx, ManyToOne, long[1:]); err != nil {
			t.Errorf("a receive port name of ipl.MaxPortName bytes: %v", err)
		} else {
			_ = rp.Close()
		}

		err = connectMissing(e, sp1, child, "nonexistent")
		want("missing port", err, ipl.ErrTimeout)
		want("missing port", err, ipl.ErrNoSuchPort, "nonexistent")

		sp2, _ := e.Ibis.CreateSendPort(OneToOne, "first")
		if err := sp2.Connect(e.Ctx, child, "o2o"); err != nil {
			t.Fatalf("connect: %v", err)
		}
		want("already connected", sp2.Connect(e.Ctx, child, "o2o"), ipl.ErrAlreadyConnected)
		want("one-to-one sender, second receiver", sp2.Connect(e.Ctx, child, "o2o-b"), ipl.ErrNotOneToMany)
		sp3, _ := e.Ibis.CreateSendPort(OneToOne, "second")
		want("second sender on one-to-one", sp3.Connect(e.Ctx, child, "o2o"), ipl.ErrNotManyToOne)

		bad, _ := e.Ibis.CreateSendPort(Upcalls, "bad")
		want("refused by the handler", bad.Connect(e.Ctx, child, "m2o"), ipl.ErrDenied)
		good, _ := e.Ibis.CreateSendPort(Upcalls, "good")
		if err := good.Connect(e.Ctx, child, "m2o"); err != nil {
			t.Errorf("connect accepted by the handler: %v", err)
		}

		// A port that does not exist yet: Connect keeps trying until it appears.
		err = connectMissing(e, sp3, child, "late")
		want("late port before it exists", err, ipl.ErrNoSuchPort)
		done := make(chan error, 1)
		go func() { done <- sp3.Connect(e.Ctx, child, "late") }()
		if err := e.Ibis.Registry().Signal(e.Ctx, "create-late", child); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Errorf("connect to a port created later: %v", err)
		}
		// A published port is found through the registry.
		gsp, _ := e.Ibis.CreateSendPort(OneToOne, "global")
		if err := gsp.ConnectGlobal(e.Ctx, "the-global-port"); err != nil {
			t.Errorf("ConnectGlobal: %v", err)
		} else if got := gsp.ConnectedTo(); len(got) != 1 || got[0].Name != "the-global-port" {
			t.Errorf("ConnectGlobal connected to %v, want the-global-port", got)
		}
		// Receive with a context that ends returns ErrTimeout.
		rp, _ := e.Ibis.CreateReceivePort(e.Ctx, OneToOne, "idle")
		ctx, cancel := context.WithTimeout(e.Ctx, time.Second)
		_, err = rp.Receive(ctx)
		cancel()
		want("receive on an idle port", err, ipl.ErrTimeout)
		if m, err := rp.Poll(); m != nil || err != nil {
			t.Errorf("Poll on an idle port = %v, %v", m, err)
		}
		for _, p := range []ipl.SendPort{sp1, sp2, sp3, bad, good, gsp} {
			_ = p.Close()
		}
		_ = rp.Close()
		if err := e.Ibis.Registry().Signal(e.Ctx, "done", child); err != nil {
			t.Fatal(err)
		}
	},
	child: func(e *Env) error {
		var ports []ipl.ReceivePort
		defer func() {
			for _, p := range ports {
				_ = p.Close()
			}
		}()
		for _, spec := range []struct {
			pt   ipl.PortType
			name string
			opts []ipl.ReceivePortOption
		}{
			{OneToOne, "o2o", nil},
			{OneToOne, "o2o-b", nil},
			{Upcalls, "m2o", []ipl.ReceivePortOption{ipl.WithConnectionHandler(denyBad{}), ipl.WithMessageHandler(func(ipl.ReadMessage) error { return nil })}},
		} {
			p, err := e.Ibis.CreateReceivePort(e.Ctx, spec.pt, spec.name, spec.opts...)
			if err != nil {
				return fmt.Errorf("creating %s: %w", spec.name, err)
			}
			ports = append(ports, p)
		}
		if _, err := e.Ibis.CreateReceivePort(e.Ctx, OneToOne, "o2o"); !errors.Is(err, ipl.ErrPortExists) {
			return fmt.Errorf("second port named o2o: got %v, want ErrPortExists", err)
		}
		gp, err := e.Ibis.CreateReceivePort(e.Ctx, OneToOne, "the-global-port", ipl.Global())
		if err != nil {
			return err
		}
		ports = append(ports, gp)
		if err := e.Ibis.Registry().Signal(e.Ctx, "ready", e.Parent); err != nil {
			return err
		}
		if err := waitSignal(e, "create-late"); err != nil {
			return err
		}
		late, err := e.Ibis.CreateReceivePort(e.Ctx, OneToOne, "late")
		if err != nil {
			return err
		}
		ports = append(ports, late)
		return waitSignal(e, "done")
	},
})
