package conformance

import (
	"errors"

	"github.com/ibisgo/ibis/ipl"
)

// A member killed with SIGKILL: the others hear that it died, every connection to and
// from it reports a lost connection, and nothing hangs.
var _ = register(&testCase{
	name:     "killed-peer",
	kills:    true,
	children: 1,
	parent: func(e *Env) {
		t := e.T
		child := e.Children[0]
		rec := &connRecorder{lost: make(chan error, 1)}
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, ManyToOne, "in", ipl.WithConnectionHandler(rec))
		if err != nil {
			t.Fatal(err)
		}
		defer rp.Close()
		lostSend := make(chan error, 1)
		sp, err := e.Ibis.CreateSendPort(OneToMany, "out", ipl.WithDisconnectHandler(func(_ ipl.SendPort, _ ipl.ReceivePortIdentifier, err error) {
			lostSend <- err
		}))
		if err != nil {
			t.Fatal(err)
		}
		defer sp.Close()
		if err := sp.Connect(e.Ctx, child, "in"); err != nil {
			t.Fatal(err)
		}
		m, err := rp.Receive(e.Ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
		e.Kill(0)
		if err := waitEvent(e, ipl.EventDied, child); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-rec.lost:
			if !errors.Is(err, ipl.ErrConnectionLost) {
				t.Errorf("receive side: lost connection reported as %v", err)
			}
		case <-e.Ctx.Done():
			t.Fatal("receive side: no LostConnection upcall")
		}
		select {
		case err := <-lostSend:
			if !errors.Is(err, ipl.ErrConnectionLost) {
				t.Errorf("send side: lost connection reported as %v", err)
			}
		case <-e.Ctx.Done():
			t.Fatal("send side: no disconnect upcall")
		}
		if got := len(sp.ConnectedTo()); got != 0 {
			t.Errorf("send port still lists %d connections", got)
		}
		// The loss counted against no message: NewMessage says it, as well as that
		// no connection is left.
		if _, err := sp.NewMessage(e.Ctx); !errors.Is(err, ipl.ErrNotConnected) || !errors.Is(err, ipl.ErrConnectionLost) {
			t.Errorf("NewMessage after the only receiver died: %v, want ErrNotConnected and ErrConnectionLost", err)
		}
	},
	child: func(e *Env) error {
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, OneToMany, "in")
		if err != nil {
			return err
		}
		defer rp.Close()
		if err := sendOneKeep(e, ManyToOne, e.Parent, "in"); err != nil {
			return err
		}
		<-e.Ctx.Done() // wait to be killed
		return nil
	},
})

// sendOneKeep connects, sends one message and keeps the connection open.
func sendOneKeep(e *Env, pt ipl.PortType, to ipl.IbisIdentifier, port string) error {
	sp, err := e.Ibis.CreateSendPort(pt, "")
	if err != nil {
		return err
	}
	if err := sp.Connect(e.Ctx, to, port); err != nil {
		return err
	}
	m, err := sp.NewMessage(e.Ctx)
	if err != nil {
		return err
	}
	_, err = m.Finish()
	return err
}
