package conformance

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// A sender that stops in the middle of a message holds up nobody for longer than the
// message timeout: the healthy senders of a many-to-one port deliver every message and
// the stalled sender's connection is cut and reported lost, its message never handed
// out whole. Where the port hands out whole messages first (tcp and nio: the stalled
// message, 80 KB, is under core.WholeMessageLimit) it is not handed out at all; where it
// is (mp), reading it fails with an error matching ErrStalled and ErrConnectionLost.
// The stalled sender sees its connection lost.
const (
	stallHealthy  = 2   // children 0 and 1 send whole messages; child 2 stalls
	stallMessages = 200 // per healthy sender
	stallValues   = 10000
)

var _ = register(&testCase{
	name:           "manytoone-stalled-sender",
	children:       stallHealthy + 1,
	messageTimeout: 2 * time.Second,
	parent: func(e *Env) {
		t := e.T
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, ManyToOne, "stall")
		if err != nil {
			t.Fatal(err)
		}
		defer rp.Close()
		staller := e.Children[stallHealthy]
		next := map[string]int64{}
		healthy, stalls, cut := 0, 0, false
		for healthy < stallHealthy*stallMessages || !cut {
			if !cut {
				lost, err := rp.LostConnections()
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range lost {
					cut = cut || l.Ibis.ID == staller.ID
				}
			}
			rctx, cancel := context.WithTimeout(e.Ctx, 50*time.Millisecond)
			m, err := rp.Receive(rctx)
			cancel()
			if errors.Is(err, ipl.ErrTimeout) && e.Ctx.Err() == nil {
				continue // nothing yet: look at the lost connections again
			}
			if err != nil {
				t.Fatalf("receive after %d healthy messages and %d stalls: %v", healthy, stalls, err)
			}
			from := m.Origin()
			k, rerr := m.ReadInt64()
			for j := 1; j < stallValues && rerr == nil; j++ {
				var v int64
				if v, rerr = m.ReadInt64(); rerr == nil && v != k+int64(j) {
					rerr = fmt.Errorf("value %d is %d, want %d", j, v, k+int64(j))
				}
			}
			_, ferr := m.Finish()
			if from.Ibis.ID == staller.ID {
				err := errors.Join(rerr, ferr)
				if !errors.Is(err, ipl.ErrStalled) || !errors.Is(err, ipl.ErrConnectionLost) {
					t.Fatalf("the stalled message ended with %v; want an error matching ErrStalled and ErrConnectionLost", err)
				}
				stalls++
				continue
			}
			if rerr != nil || ferr != nil {
				t.Fatalf("message from healthy %s: %v %v", from, rerr, ferr)
			}
			if want := next[from.String()] * stallValues; k != want {
				t.Fatalf("from %s: message starting at %d, want %d", from, k, want)
			}
			next[from.String()]++
			healthy++
		}
		if stalls > 1 {
			t.Errorf("%d stalled messages handed out, want at most 1", stalls)
		}
		if err := e.Ibis.Registry().Signal(e.Ctx, "stall-seen", staller); err != nil {
			t.Fatal(err)
		}
	},
	child: func(e *Env) error {
		// The staller (child 2) holds its message until the parent has seen the stall.
		return stallChild(e, "stall", stallHealthy, func() error { return waitSignal(e, "stall-seen") })
	},
})

// stallChild is the child part of the stall cases. Children below healthy send
// stallMessages whole messages into the parent's port; the others begin one message of
// more than a packet (its first packet leaves), call between (the parent acts
// meanwhile), and then check that the connection the parent cut is reported lost and
// that the message's Finish fails with ErrConnectionLost.
func stallChild(e *Env, port string, healthy int, between func() error) error {
	sp, err := e.Ibis.CreateSendPort(ManyToOne, port)
	if err != nil {
		return err
	}
	defer sp.Close()
	if err := sp.Connect(e.Ctx, e.Parent, port); err != nil {
		return err
	}
	if e.Index < healthy {
		for k := range int64(stallMessages) {
			if err := stallMessage(e, sp, k*stallValues, stallValues); err != nil {
				return fmt.Errorf("message %d: %w", k, err)
			}
		}
		return nil
	}
	m, err := sp.NewMessage(e.Ctx)
	if err != nil {
		return err
	}
	for j := range int64(stallValues) {
		if err := m.WriteInt64(j); err != nil {
			return err
		}
	}
	if err := between(); err != nil {
		return err
	}
	for {
		lost, err := sp.LostConnections()
		if err != nil {
			return err
		}
		if len(lost) > 0 {
			break
		}
		select {
		case <-e.Ctx.Done():
			return fmt.Errorf("the cut connection was never reported lost: %w", e.Ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := m.Finish(); !errors.Is(err, ipl.ErrConnectionLost) {
		return fmt.Errorf("finishing the stalled message after the cut: %v, want ErrConnectionLost", err)
	}
	return nil
}

// stallMessage sends one message of n consecutive values starting at first.
func stallMessage(e *Env, sp ipl.SendPort, first int64, n int) error {
	m, err := sp.NewMessage(e.Ctx)
	if err != nil {
		return err
	}
	for j := range int64(n) {
		if err := m.WriteInt64(first + j); err != nil {
			return err
		}
	}
	_, err = m.Finish()
	return err
}

// A sender stopped (SIGSTOP) in the middle of a message is declared dead by the
// registry; its connection is cut at once (well before the message timeout, which is
// left at its default here), the healthy senders go on, and when the stopped process
// comes back it learns that it was declared dead and its instance ends.
var _ = register(&testCase{
	name:     "manytoone-dead-sender-cut",
	kills:    true,
	children: 3,
	// The stopped member is found by its silence: a short timeout keeps the case short.
	heartbeat:    time.Second,
	deathTimeout: 4 * time.Second,
	parent: func(e *Env) {
		t := e.T
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, ManyToOne, "dead")
		if err != nil {
			t.Fatal(err)
		}
		defer rp.Close()
		const stopped = 2
		staller := e.Children[stopped]
		if err := waitSignal(e, "begun"); err != nil {
			t.Fatal(err)
		}
		e.Stop(stopped)
		// The stopped sender's message may have begun to arrive (the receiver then gets
		// an error when it reads it) or not (with a queueing send flavour its first
		// packet may still have been in the sender's queue): either way its connection
		// must end, reported as lost, while the healthy senders deliver everything.
		healthy, gone := 0, false
		for healthy < 2*stallMessages || !gone {
			if !gone {
				gone = lostFrom(t, rp, staller)
			}
			rctx, cancel := context.WithTimeout(e.Ctx, 50*time.Millisecond)
			m, err := rp.Receive(rctx)
			cancel()
			if errors.Is(err, ipl.ErrTimeout) && e.Ctx.Err() == nil {
				continue // nothing yet: look at the lost connections again
			}
			if err != nil {
				t.Fatalf("receive after %d healthy messages: %v", healthy, err)
			}
			var rerr error
			for j := 0; j < stallValues && rerr == nil; j++ {
				_, rerr = m.ReadInt64()
			}
			_, ferr := m.Finish()
			if m.Origin().Ibis.ID == staller.ID {
				if err := errors.Join(rerr, ferr); !errors.Is(err, ipl.ErrConnectionLost) {
					t.Fatalf("the stopped sender's message ended with %v; want ErrConnectionLost", err)
				}
				continue
			}
			if rerr != nil || ferr != nil {
				t.Fatalf("message from a healthy sender: %v %v", rerr, ferr)
			}
			healthy++
		}
		if err := waitEvent(e, ipl.EventDied, staller); err != nil {
			t.Fatal(err)
		}
		e.Continue(stopped)
		// The resumed child checks what it sees and exits 0 when it is right.
		if err := e.Wait(stopped); err != nil {
			t.Errorf("the resumed sender: %v", err)
		}
	},
	child: func(e *Env) error {
		if e.Index < 2 {
			return stallChild(e, "dead", 2, nil)
		}
		// The staller (child 2) begins a message and tells the parent, which may stop
		// it at once, before the signal's reply comes back. Resumed, it has been declared
		// dead: the registry tells it so, and its instance ends.
		sp, err := e.Ibis.CreateSendPort(ManyToOne, "dead")
		if err != nil {
			return err
		}
		defer sp.Close()
		if err := sp.Connect(e.Ctx, e.Parent, "dead"); err != nil {
			return err
		}
		m, err := sp.NewMessage(e.Ctx)
		if err != nil {
			return err
		}
		for j := range int64(stallValues) {
			if err := m.WriteInt64(j); err != nil {
				return err
			}
		}
		_ = e.Ibis.Registry().Signal(e.Ctx, "begun", e.Parent)
		select {
		case <-e.Ibis.Done():
			return nil
		case <-e.Ctx.Done():
			return fmt.Errorf("resumed after being declared dead, the instance did not end: %w", e.Ctx.Err())
		}
	},
})

// lostFrom takes rp's newly lost connections and reports whether one of them came
// from the instance id.
func lostFrom(t *testing.T, rp ipl.ReceivePort, id ipl.IbisIdentifier) bool {
	t.Helper()
	lost, err := rp.LostConnections()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lost {
		if l.Ibis.ID == id.ID {
			return true
		}
	}
	return false
}
