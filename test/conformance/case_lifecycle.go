package conformance

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ibisgo/ibis/ipl"
)

// A message handler may end its own Ibis (a "stop" message) without deadlocking, and a
// connection handler may close its own port.
var _ = register(&testCase{
	name:     "close-from-handlers",
	children: 1,
	parent: func(e *Env) {
		t := e.T
		child := e.Children[0]
		if err := sendOne(e, Upcalls, child, "stop", func(m ipl.WriteMessage) error {
			return m.WriteObject("stop")
		}); err != nil {
			t.Fatalf("sending stop: %v", err)
		}
		// The child's port that closes itself from GotConnection: it is gone, so the
		// connect keeps getting "no such port" until its time is up.
		sp, _ := e.Ibis.CreateSendPort(Upcalls, "")
		defer sp.Close()
		err := connectMissing(e, sp, child, "selfclose")
		if !errors.Is(err, ipl.ErrNoSuchPort) {
			t.Errorf("connect to a port that closed itself in GotConnection: %v, want ErrNoSuchPort", err)
		}
		if err := e.Ibis.Registry().Signal(e.Ctx, "tried", child); err != nil {
			t.Fatal(err)
		}
	},
	child: func(e *Env) error {
		stopped := make(chan struct{})
		var once sync.Once
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, Upcalls, "stop", ipl.WithMessageHandler(func(m ipl.ReadMessage) error {
			var s string
			if err := m.ReadObject(&s); err != nil {
				return err
			}
			if s == "stop" {
				once.Do(func() { close(stopped) })
			}
			return nil
		}))
		if err != nil {
			return err
		}
		self := &selfCloser{}
		sc, err := e.Ibis.CreateReceivePort(e.Ctx, Upcalls, "selfclose", ipl.WithConnectionHandler(self),
			ipl.WithMessageHandler(func(ipl.ReadMessage) error { return nil }))
		if err != nil {
			return err
		}
		self.port = sc
		if err := rp.EnableMessageUpcalls(); err != nil {
			return err
		}
		select {
		case <-stopped:
		case <-e.Ctx.Done():
			return fmt.Errorf("no stop message: %w", e.Ctx.Err())
		}
		if err := waitSignal(e, "tried"); err != nil {
			return err
		}
		// Now end the Ibis from inside a message handler of a fresh port.
		closed := make(chan error, 1)
		last, err := e.Ibis.CreateReceivePort(e.Ctx, Upcalls, "last", ipl.WithMessageHandler(func(ipl.ReadMessage) error {
			closed <- e.Ibis.Close()
			return nil
		}))
		if err != nil {
			return err
		}
		if err := last.EnableMessageUpcalls(); err != nil {
			return err
		}
		if err := sendOne(e, Upcalls, e.Ibis.Identifier(), "last", func(m ipl.WriteMessage) error {
			return m.WriteObject("bye")
		}); err != nil {
			return fmt.Errorf("sending to self: %w", err)
		}
		select {
		case err := <-closed:
			if err != nil {
				return fmt.Errorf("closing the Ibis from a handler: %w", err)
			}
		case <-e.Ctx.Done():
			return errors.New("closing the Ibis from inside a message handler did not return")
		}
		select {
		case <-e.Ibis.Done():
		case <-e.Ctx.Done():
			return errors.New("the Ibis closed from a handler never ended")
		}
		return nil
	},
})

type selfCloser struct{ port ipl.ReceivePort }

func (s *selfCloser) GotConnection(ipl.ReceivePort, ipl.SendPortIdentifier) bool {
	_ = s.port.Close()
	return true
}
func (s *selfCloser) LostConnection(ipl.ReceivePort, ipl.SendPortIdentifier, error) {}

const mixedMessages = 100

// Upcalls disabled from inside a handler: no upcall follows, and the rest of the
// messages come, in order, through explicit Receive.
var _ = register(&testCase{
	name:     "disable-upcalls",
	children: 1,
	parent: func(e *Env) {
		t := e.T
		var (
			mu       sync.Mutex
			next     int64
			late     int
			switched = make(chan struct{})
			rp       ipl.ReceivePort
		)
		handler := func(m ipl.ReadMessage) error {
			v, err := m.ReadInt64()
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			select {
			case <-switched:
				late++
				return nil
			default:
			}
			if v != next {
				t.Errorf("upcall got message %d, want %d", v, next)
			}
			next++
			if v == 20 {
				rp.DisableMessageUpcalls()
				close(switched)
			}
			return nil
		}
		var err error
		rp, err = e.Ibis.CreateReceivePort(e.Ctx, Mixed, "mixed", ipl.WithMessageHandler(handler))
		if err != nil {
			t.Fatal(err)
		}
		defer rp.Close()
		if err := rp.EnableMessageUpcalls(); err != nil {
			t.Fatal(err)
		}
		if err := e.Ibis.Registry().Signal(e.Ctx, "go", e.Children...); err != nil {
			t.Fatal(err)
		}
		select {
		case <-switched:
		case <-e.Ctx.Done():
			t.Fatal("upcalls never reached message 20")
		}
		for {
			mu.Lock()
			n := next
			mu.Unlock()
			if n == mixedMessages {
				break
			}
			m, err := rp.Receive(e.Ctx)
			if err != nil {
				t.Fatalf("explicit receive after disabling upcalls: %v", err)
			}
			v, _ := m.ReadInt64()
			if _, err := m.Finish(); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			if v != next {
				t.Errorf("explicit receive got message %d, want %d", v, next)
			}
			next = v + 1
			mu.Unlock()
		}
		mu.Lock()
		defer mu.Unlock()
		if late != 0 {
			t.Errorf("%d upcalls came after DisableMessageUpcalls", late)
		}
	},
	child: func(e *Env) error {
		sp, err := senderAfterGo(e, Mixed, "mixed")
		if err != nil {
			return err
		}
		defer sp.Close()
		for i := range int64(mixedMessages) {
			m, err := sp.NewMessage(e.Ctx)
			if err != nil {
				return err
			}
			_ = m.WriteInt64(i)
			if _, err := m.Finish(); err != nil {
				return err
			}
		}
		return nil
	},
})
