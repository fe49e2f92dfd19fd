package conformance

import (
	"fmt"
	"sync"
)

// The load that once stalled nio for good: a hundred send ports (three processes of 34,
// so that the case also runs in a four-rank mpirun job), each sending messages of 7,000
// int64 values written one by one (about 56 KB, so every message is one small packet
// that arrives in pieces) into one many-to-one port. Every message must arrive, each
// sender's in order, and every Finish must return nil. (The report had 100 messages a
// sender; 30 reproduce the stall as surely, at a third of the cost.)
const (
	loadSenders  = 34 // send ports per child
	loadMessages = 30
	loadValues   = 7000
)

var _ = register(&testCase{
	name:     "manytoone-hundred-senders",
	children: 3,
	parent: func(e *Env) {
		t := e.T
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, ManyToOne, "load")
		if err != nil {
			t.Fatal(err)
		}
		defer rp.Close()
		next := map[string]int64{}
		vals := make([]int64, loadValues)
		total := len(e.Children) * loadSenders * loadMessages
		for n := range total {
			m, err := rp.Receive(e.Ctx)
			if err != nil {
				t.Fatalf("receive after %d of %d messages: %v", n, total, err)
			}
			from := m.Origin().String()
			bad := m.ReadArray(vals)
			for j, v := range vals {
				if want := next[from]*loadValues + int64(j); v != want && bad == nil {
					bad = fmt.Errorf("value %d is %d, want %d", j, v, want)
				}
			}
			if _, err := m.Finish(); err != nil && bad == nil {
				bad = err
			}
			if bad != nil {
				t.Fatalf("message %d of %s: %v", next[from], from, bad)
			}
			next[from]++
		}
		if len(next) != len(e.Children)*loadSenders {
			t.Errorf("heard from %d senders, want %d", len(next), len(e.Children)*loadSenders)
		}
		for from, k := range next {
			if k != loadMessages {
				t.Errorf("%s: %d messages, want %d", from, k, loadMessages)
			}
		}
	},
	child: func(e *Env) error {
		errs := make(chan error, loadSenders)
		var wg sync.WaitGroup
		for s := range loadSenders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- loadSend(e, s)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	},
})

// loadSend is one sender of the hundred-senders case.
func loadSend(e *Env, s int) error {
	sp, err := e.Ibis.CreateSendPort(ManyToOne, fmt.Sprintf("load-%d", s))
	if err != nil {
		return err
	}
	defer sp.Close()
	if err := sp.Connect(e.Ctx, e.Parent, "load"); err != nil {
		return fmt.Errorf("sender %d: %w", s, err)
	}
	for k := range int64(loadMessages) {
		m, err := sp.NewMessage(e.Ctx)
		if err != nil {
			return fmt.Errorf("sender %d, message %d: %w", s, k, err)
		}
		for j := range int64(loadValues) {
			if err := m.WriteInt64(k*loadValues + j); err != nil {
				return fmt.Errorf("sender %d, message %d: %w", s, k, err)
			}
		}
		if _, err := m.Finish(); err != nil {
			return fmt.Errorf("sender %d, message %d: %w", s, k, err)
		}
	}
	return nil
}
