package conformance

import (
	"fmt"
	"sync"

	"github.com/ibisgo/ibis/ipl"
)

const upcallMessages = 150

type connRecorder struct {
	mu   sync.Mutex
	got  []ipl.SendPortIdentifier
	lost chan error
}

func (r *connRecorder) GotConnection(_ ipl.ReceivePort, from ipl.SendPortIdentifier) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, from)
	return true
}

func (r *connRecorder) LostConnection(_ ipl.ReceivePort, _ ipl.SendPortIdentifier, err error) {
	r.lost <- err
}

// Messages delivered as upcalls: one at a time unless a handler finishes early, all of
// them, in order per sender; connection upcalls see each sender come and go.
var _ = register(&testCase{
	name:     "upcalls",
	children: 2,
	parent: func(e *Env) {
		t := e.T
		var (
			mu      sync.Mutex
			next    = map[string]int{}
			live    int
			maxLive int
			total   int
			errs    []error
		)
		all := make(chan struct{})
		handler := func(m ipl.ReadMessage) error {
			var rec Record
			if err := m.ReadObject(&rec); err != nil {
				return err
			}
			mu.Lock()
			live++
			maxLive = max(maxLive, live)
			from := m.Origin().String()
			if rec.Tags["k"] != next[from] {
				errs = append(errs, fmt.Errorf("from %s: message %d, want %d", from, rec.Tags["k"], next[from]))
			}
			next[from]++
			early := rec.Tags["k"]%10 == 0
			if early {
				live-- // the message ends here; the port may deliver the next at once
			}
			mu.Unlock()
			if early {
				if _, err := m.Finish(); err != nil {
					return err
				}
			}
			mu.Lock()
			if !early {
				live--
			}
			total++
			if total == upcallMessages*len(e.Children) {
				close(all)
			}
			mu.Unlock()
			return nil
		}
		rec := &connRecorder{lost: make(chan error, len(e.Children))}
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, Upcalls, "up", ipl.WithMessageHandler(handler), ipl.WithConnectionHandler(rec))
		if err != nil {
			t.Fatal(err)
		}
		defer rp.Close()
		if _, err := rp.Receive(e.Ctx); err == nil {
			t.Errorf("explicit receive on an upcall-only port type succeeded")
		}
		if err := rp.EnableMessageUpcalls(); err != nil {
			t.Fatal(err)
		}
		if err := e.Ibis.Registry().Signal(e.Ctx, "go", e.Children...); err != nil {
			t.Fatal(err)
		}
		select {
		case <-all:
		case <-e.Ctx.Done():
			mu.Lock()
			n := total
			mu.Unlock()
			t.Fatalf("only %d upcalls arrived", n)
		}
		for range e.Children {
			select {
			case err := <-rec.lost:
				if err != nil {
					t.Errorf("clean disconnect reported as %v", err)
				}
			case <-e.Ctx.Done():
				t.Fatal("no LostConnection upcall after the senders closed")
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for _, err := range errs {
			t.Error(err)
		}
		if len(rec.got) != len(e.Children) {
			t.Errorf("GotConnection called %d times, want %d", len(rec.got), len(e.Children))
		}
		if maxLive != 1 {
			t.Errorf("%d messages were live at once; the port must deliver one at a time", maxLive)
		}
	},
	child: func(e *Env) error {
		sp, err := senderAfterGo(e, Upcalls, "up")
		if err != nil {
			return err
		}
		defer sp.Close()
		for k := range upcallMessages {
			m, err := sp.NewMessage(e.Ctx)
			if err != nil {
				return err
			}
			if err := m.WriteObject(Record{Name: "x", Tags: map[string]int{"k": k}}); err != nil {
				return err
			}
			if _, err := m.Finish(); err != nil {
				return err
			}
		}
		return sp.Close()
	},
})
