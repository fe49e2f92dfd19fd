package tcp

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

var directType = ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO)

// A second sender to a one-to-one (direct) port whose receiver sits in Receive on the
// first one is refused at once with ErrNotManyToOne (the sleep only makes the busy case
// likely; without it the probe path gives the same answer).
func TestSecondSenderToBusyDirectPortIsRefused(t *testing.T) {
	ib := newTestIbis(t, ipl.WithPortTypes(dataType, directType))
	rp, err := ib.CreateReceivePort(t.Context(), directType, "o2o")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, _ := ib.CreateSendPort(directType, "a")
	if err := a.Connect(ctx, ib.Identifier(), "o2o"); err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := rp.Receive(rctx); done <- err }()
	time.Sleep(50 * time.Millisecond) // Receive is now reading A
	b, _ := ib.CreateSendPort(directType, "b")
	cctx, ccancel := context.WithTimeout(ctx, 3*time.Second)
	err = b.Connect(cctx, ib.Identifier(), "o2o")
	ccancel()
	if !errors.Is(err, ipl.ErrNotManyToOne) {
		t.Errorf("second sender on a busy one-to-one port: %v, want ErrNotManyToOne", err)
	}
	rcancel()
	<-done
}

var upcallType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveAutoUpcalls,
	ipl.ReceiveExplicit, ipl.CommunicationReliable, ipl.CommunicationFIFO)

// Upcalls toggled on and off while messages flow: each message arrives exactly once, in order.
func TestToggleUpcallsKeepsOrder(t *testing.T) {
	ib := newTestIbis(t, ipl.WithPortTypes(dataType, upcallType))
	var mu sync.Mutex
	next := int64(0)
	var errs []string
	check := func(v int64, how string) {
		mu.Lock()
		defer mu.Unlock()
		if v != next && len(errs) < 5 {
			errs = append(errs, fmt.Sprintf("%s got %d, want %d", how, v, next))
		}
		next = v + 1
	}
	rp, _ := ib.CreateReceivePort(t.Context(), upcallType, "u", ipl.WithMessageHandler(func(m ipl.ReadMessage) error {
		v, err := m.ReadInt64()
		if err != nil {
			return err
		}
		check(v, "upcall")
		return nil
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sp, _ := ib.CreateSendPort(upcallType, "")
	if err := sp.Connect(ctx, ib.Identifier(), "u"); err != nil {
		t.Fatal(err)
	}
	const n = 1000
	go func() {
		for i := int64(0); i < n; i++ {
			m, err := sp.NewMessage(ctx)
			if err != nil {
				return
			}
			_ = m.WriteInt64(i)
			_, _ = m.Finish()
		}
	}()
	for {
		mu.Lock()
		done := next >= n
		mu.Unlock()
		if done {
			break
		}
		_ = rp.EnableMessageUpcalls()
		time.Sleep(time.Duration(rand.Intn(200)) * time.Microsecond)
		rp.DisableMessageUpcalls()
		for k := 0; k < 3; k++ {
			rctx, rc := context.WithTimeout(ctx, 200*time.Microsecond)
			m, err := rp.Receive(rctx)
			rc()
			if err != nil {
				break
			}
			v, _ := m.ReadInt64()
			_, _ = m.Finish()
			check(v, "receive")
		}
		if ctx.Err() != nil {
			t.Fatalf("stuck at %d", next)
		}
	}
	if len(errs) > 0 {
		t.Error(errs)
	}
}

// A live message cut by SendPort.Close reports ErrClosed, not a lost peer.
func TestFinishAfterPortCloseIsErrClosed(t *testing.T) {
	ib := newTestIbis(t, ipl.WithPortTypes(dataType))
	if _, err := ib.CreateReceivePort(t.Context(), dataType, "r"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sp, _ := ib.CreateSendPort(dataType, "")
	if err := sp.Connect(ctx, ib.Identifier(), "r"); err != nil {
		t.Fatal(err)
	}
	m, _ := sp.NewMessage(ctx)
	_ = m.WriteInt64(1)
	if err := sp.Close(); !errors.Is(err, ipl.ErrConnectionLost) {
		t.Errorf("Close with a live message: %v, want ErrConnectionLost (the message was cut)", err)
	}
	_, err := m.Finish()
	if !errors.Is(err, ipl.ErrClosed) {
		t.Errorf("Finish of a message cut by Close: %v, want ErrClosed", err)
	}
}

// Events still queued when Close runs are dropped, not handed to the handler: the
// handler, blocked in its first call while signals queue up, is let go once Close has
// stopped delivery, and by the time Wait returns it has been called that once only
// (the sleep only makes the queue likely to be full; it cannot make the test fail).
func TestNoEventsAfterClose(t *testing.T) {
	gate := make(chan struct{})
	var calls atomic.Int32
	first := make(chan struct{}, 1)
	ib := newTestIbis(t, ipl.WithPortTypes(dataType), ipl.WithEventHandler(func(e ipl.Event) {
		calls.Add(1)
		select {
		case first <- struct{}{}:
			<-gate
		default:
		}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	<-first // handler blocked on some event (our own Joined)
	for i := 0; i < 20; i++ {
		if err := ib.Registry().Signal(ctx, "s", ib.Identifier()); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond) // the signals are queued
	// Done closes after delivery has stopped: the handler is let go then.
	go func() { <-ib.Done(); close(gate) }()
	if err := ib.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ib.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the event handler was called %d times, want once: queued events were handed over after Close", n)
	}
}
