package conformance

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ibisgo/ibis/ipl"
)

// concurrentUpcalls is the concurrency of the case's port: fewer than its senders, so
// that a sender's message also waits for a free upcall, not only for its own last one.
const (
	concurrentUpcalls  = 2
	concurrentMessages = 200
)

// ccState is what the handlers of the concurrent-upcalls case record.
type ccState struct {
	mu       sync.Mutex
	next     map[string]int32 // the message each sender's next upcall must carry
	holding  map[string]int   // messages of each sender held by a handler now
	held     int              // messages held by handlers now
	maxHeld  int
	total    int
	arrived  int           // handlers of a first message that reached the rendezvous
	both     chan struct{} // closed when concurrentUpcalls of them are in at once
	all      chan struct{} // closed when every message of the upcall phase came
	disabled bool          // upcalls were disabled: a handler now is a bug
	errs     []error
}

// Messages delivered as concurrent upcalls (ipl.WithConcurrentUpcalls): handlers on
// messages of different senders run at the same time (two first messages wait for each
// other), at most n hold a message, each sender's messages come in order and one at a
// time, DisableMessageUpcalls stops every dispatcher and hands the port back to
// explicit Receive, and the option is refused where it cannot work.
var _ = register(&testCase{
	name:     "concurrentupcalls",
	children: 3,
	parent: func(e *Env) {
		t := e.T
		for _, c := range []struct {
			what string
			pt   ipl.PortType
			opts []ipl.ReceivePortOption
			want error
		}{
			{"without a handler", ManyToOne, []ipl.ReceivePortOption{ipl.WithConcurrentUpcalls(2)}, ipl.ErrUnsupported},
			{"with a negative count", Mixed, []ipl.ReceivePortOption{ipl.WithConcurrentUpcalls(-1),
				ipl.WithMessageHandler(func(ipl.ReadMessage) error { return nil })}, ipl.ErrInvalidArgument},
		} {
			if rp, err := e.Ibis.CreateReceivePort(e.Ctx, c.pt, "bad", c.opts...); !errors.Is(err, c.want) {
				if rp != nil {
					_ = rp.Close()
				}
				t.Errorf("concurrent upcalls %s: got %v, want %v", c.what, err, c.want)
			}
		}
		s := &ccState{next: map[string]int32{}, holding: map[string]int{},
			both: make(chan struct{}), all: make(chan struct{})}
		handler := func(m ipl.ReadMessage) error { return s.upcall(e, m, len(e.Children)) }
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, Mixed, "cc", ipl.WithMessageHandler(handler),
			ipl.WithConcurrentUpcalls(concurrentUpcalls))
		if err != nil {
			t.Fatal(err)
		}
		defer rp.Close()
		if err := rp.EnableMessageUpcalls(); err != nil {
			t.Fatal(err)
		}
		if _, err := rp.Receive(e.Ctx); !errors.Is(err, ipl.ErrUnsupported) {
			t.Errorf("explicit receive with upcalls enabled: got %v, want ipl.ErrUnsupported", err)
		}
		if err := e.Ibis.Registry().Signal(e.Ctx, "go", e.Children...); err != nil {
			t.Fatal(err)
		}
		select {
		case <-s.all:
		case <-e.Ctx.Done():
			s.mu.Lock()
			n, in := s.total, s.arrived
			s.mu.Unlock()
			t.Fatalf("only %d upcalls ended; %d handlers of first messages came in (want %d at once)", n, in, concurrentUpcalls)
		}
		rp.DisableMessageUpcalls()
		s.mu.Lock()
		s.disabled = true
		s.mu.Unlock()
		// Each sender sends one more: explicit Receive takes them now, in order.
		if err := e.Ibis.Registry().Signal(e.Ctx, "more", e.Children...); err != nil {
			t.Fatal(err)
		}
		for range e.Children {
			m, err := rp.Receive(e.Ctx)
			if err != nil {
				t.Fatalf("explicit receive after disabling upcalls: %v", err)
			}
			k, err := m.ReadInt32()
			from := m.Origin().String()
			if _, ferr := m.Finish(); err == nil {
				err = ferr
			}
			if err != nil {
				t.Fatal(err)
			}
			if k != concurrentMessages {
				t.Errorf("explicit receive got message %d from %s, want %d", k, from, concurrentMessages)
			}
		}
		// Enabled again, the dispatchers wait for messages that do not come: Close (the
		// deferred one) must end them all, which the leak check of the test binary sees.
		if err := rp.EnableMessageUpcalls(); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, err := range s.errs {
			t.Error(err)
		}
		if s.maxHeld > concurrentUpcalls {
			t.Errorf("%d messages were held by handlers at once, want at most %d", s.maxHeld, concurrentUpcalls)
		}
	},
	child: func(e *Env) error {
		sp, err := senderAfterGo(e, Mixed, "cc")
		if err != nil {
			return err
		}
		defer sp.Close()
		send := func(k int32) error {
			m, err := sp.NewMessage(e.Ctx)
			if err != nil {
				return err
			}
			if err := m.WriteInt32(k); err != nil {
				_, _ = m.Finish()
				return err
			}
			_, err = m.Finish()
			return err
		}
		for k := range int32(concurrentMessages) {
			if err := send(k); err != nil {
				return err
			}
		}
		if err := waitSignal(e, "more"); err != nil {
			return err
		}
		if err := send(concurrentMessages); err != nil {
			return err
		}
		return sp.Close()
	},
})

// upcall is the case's handler: it checks the order and the concurrency of the
// upcalls, lets the first messages of two senders wait for each other, and finishes
// every tenth message early.
func (s *ccState) upcall(e *Env, m ipl.ReadMessage, senders int) error {
	k, err := m.ReadInt32()
	if err != nil {
		return err
	}
	from := m.Origin().String()
	s.mu.Lock()
	if s.disabled {
		s.errs = append(s.errs, fmt.Errorf("message %d from %s came as an upcall after DisableMessageUpcalls", k, from))
	}
	if k != s.next[from] {
		s.errs = append(s.errs, fmt.Errorf("from %s: message %d, want %d", from, k, s.next[from]))
	}
	s.next[from] = k + 1
	s.holding[from]++
	if s.holding[from] > 1 {
		s.errs = append(s.errs, fmt.Errorf("from %s: %d messages held at once, want one at a time per sender", from, s.holding[from]))
	}
	s.held++
	s.maxHeld = max(s.maxHeld, s.held)
	first := k == 0
	if first {
		s.arrived++
		if s.arrived == concurrentUpcalls {
			close(s.both)
		}
	}
	s.mu.Unlock()
	if first {
		// Without concurrent upcalls the second first message would never come while
		// this one waits: the case would end at its deadline.
		select {
		case <-s.both:
		case <-e.Ctx.Done():
			s.record(fmt.Errorf("the first message from %s waited for a second concurrent upcall until the case's end", from))
		}
	}
	early := k%10 == 5
	if early {
		s.release(from)
		if _, err := m.Finish(); err != nil {
			return err
		}
	}
	s.mu.Lock()
	if !early {
		s.holding[from]--
		s.held--
	}
	s.total++
	if s.total == concurrentMessages*senders {
		close(s.all)
	}
	s.mu.Unlock()
	return nil
}

// release counts a message as no longer held before its handler finishes it early.
func (s *ccState) release(from string) {
	s.mu.Lock()
	s.holding[from]--
	s.held--
	s.mu.Unlock()
}

func (s *ccState) record(err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
}
