package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// A sender streams numbered messages into a many-to-one port, is stopped (SIGSTOP) in
// the middle of its stream and declared dead by the registry (its instance ends when it
// comes back and learns it). The receiver cuts its
// connection only after it has taken everything that arrived: every message it got is
// whole and in order. Resumed, the sender learns from its Finish or Close how many of
// the messages it was told were handed over the receiver took (the cut notice), and that
// number is exactly what the receiver got (with no such report, every message it
// handed over must have arrived): nothing the sender was not told about is missing.
const drainValues = 64 // int64 values per message

// drainFile is where the resumed sender writes what it learned, for the parent to
// compare with what it received: a file named after the pool, which both know.
func drainFile(e *Env) string {
	return filepath.Join(os.TempDir(), "ibis-conformance-"+e.Ibis.Identifier().Pool+".drain")
}

var _ = register(&testCase{
	name:     "dead-sender-drained",
	kills:    true,
	children: 1,
	// The stopped member is found by its silence: a short timeout keeps the case short.
	heartbeat:    time.Second,
	deathTimeout: 4 * time.Second,
	parent: func(e *Env) {
		t := e.T
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, ManyToOne, "drain")
		if err != nil {
			t.Fatal(err)
		}
		defer rp.Close()
		sender := e.Children[0]
		defer os.Remove(drainFile(e))
		received, stopped, gone := int64(0), false, false
		for !gone {
			if stopped {
				gone = lostFrom(t, rp, sender)
			}
			rctx, cancel := context.WithTimeout(e.Ctx, 50*time.Millisecond)
			m, err := rp.Receive(rctx)
			cancel()
			if errors.Is(err, ipl.ErrTimeout) && e.Ctx.Err() == nil {
				continue // nothing yet: look at the lost connections again
			}
			if err != nil {
				t.Fatalf("receive after %d messages: %v", received, err)
			}
			var rerr error
			for j := int64(0); j < drainValues && rerr == nil; j++ {
				var v int64
				if v, rerr = m.ReadInt64(); rerr == nil && v != received*drainValues+j {
					t.Fatalf("message %d, value %d: got %d (a message lost, reordered or damaged)", received, j, v)
				}
			}
			_, ferr := m.Finish()
			if err := errors.Join(rerr, ferr); err != nil {
				// The message the sender had begun when it stopped: thrown away whole.
				if !errors.Is(err, ipl.ErrConnectionLost) {
					t.Fatalf("message %d ended with %v; want a whole message or ErrConnectionLost", received, err)
				}
				continue
			}
			received++
			if received == 500 && !stopped {
				e.Stop(0) // in the middle of its stream
				stopped = true
			}
		}
		if err := waitEvent(e, ipl.EventDied, sender); err != nil {
			t.Fatal(err)
		}
		e.Continue(0)
		if err := e.Wait(0); err != nil {
			t.Fatalf("the resumed sender: %v", err)
		}
		b, err := os.ReadFile(drainFile(e))
		if err != nil {
			t.Fatal(err)
		}
		var taken, handed int64
		if _, err := fmt.Sscan(string(b), &taken, &handed); err != nil {
			t.Fatalf("the sender's report %q: %v", b, err)
		}
		t.Logf("received %d whole messages; the sender's Finish handed over %d and it learned that %d were taken", received, handed, taken)
		if taken != received {
			t.Errorf("the sender learned that %d messages were taken; the receiver got %d (the sender's errors: %s)", taken, received, b)
		}
	},
	child: func(e *Env) error {
		sp, err := e.Ibis.CreateSendPort(ManyToOne, "drain")
		if err != nil {
			return err
		}
		if err := sp.Connect(e.Ctx, e.Parent, "drain"); err != nil {
			return err
		}
		// Stream until the port fails: the parent stops this process in the middle, the
		// registry declares it dead and the receiver cuts it.
		var handed int64
		var errs []error
		for e.Ctx.Err() == nil {
			m, err := sp.NewMessage(e.Ctx)
			if err != nil {
				errs = append(errs, err)
				break
			}
			var werr error
			for j := int64(0); j < drainValues && werr == nil; j++ {
				werr = m.WriteInt64(handed*drainValues + j)
			}
			_, ferr := m.Finish()
			if err := errors.Join(werr, ferr); err != nil {
				errs = append(errs, err)
				break
			}
			handed++
		}
		// Resumed, this member learns that it was declared dead and its instance ends,
		// closing the port: what the port had to report is then in the instance's
		// Close (which returns it to every caller).
		errs = append(errs, sp.Close(), e.Ibis.Close())
		err = errors.Join(errs...)
		// The guarantee: Finish nil hands a message over; a receiver that throws away
		// messages it was handed is reported by a later Finish or Close, which says
		// how many it took. No such report means it took every one.
		taken := handed
		if i := strings.Index(err.Error(), "after taking "); i >= 0 {
			if _, serr := fmt.Sscan(err.Error()[i+len("after taking "):], &taken); serr != nil {
				return fmt.Errorf("reading the number taken from %q: %v", err, serr)
			}
		}
		switch {
		case taken > handed:
			return fmt.Errorf("the receiver took %d messages, more than the %d handed over", taken, handed)
		case taken < handed && !strings.Contains(err.Error(), "thrown away"):
			return fmt.Errorf("the receiver took %d of %d messages handed over and no loss was reported: %v", taken, handed, err)
		case taken < handed && !errors.Is(err, ipl.ErrConnectionLost):
			return fmt.Errorf("the reported loss does not match ErrConnectionLost: %v", err)
		}
		return os.WriteFile(drainFile(e), fmt.Appendf(nil, "%d %d\n%v\n", taken, handed, err), 0o600)
	},
})
