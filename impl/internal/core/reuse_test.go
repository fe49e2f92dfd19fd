package core

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/ipl"
)

// TestReusedMessagesStayApart: on a direct port pair the message objects are reused,
// yet messages arrive whole and in order whatever context each Receive passes, and a
// message used right after its Finish is refused with ErrMessageFinished on both sides.
func TestReusedMessagesStayApart(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the instances' own cleanup
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := newDiedPair(ctx, t)
	loop, endLoop := context.WithCancel(ctx)
	defer endLoop()
	var prevW ipl.WriteMessage
	var prevR ipl.ReadMessage
	for i := range int64(40) {
		w, err := p.sp.NewMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if w == prevW {
			t.Fatalf("message %d got the object of the message before", i)
		}
		prevW = w
		if err := w.WriteInt64(i); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Finish(); !errors.Is(err, ipl.ErrMessageFinished) {
			t.Fatalf("second Finish of write message %d: %v, want ErrMessageFinished", i, err)
		}
		if err := w.WriteInt64(i); !errors.Is(err, ipl.ErrMessageFinished) {
			t.Fatalf("write after Finish of message %d: %v, want ErrMessageFinished", i, err)
		}
		// Receives pass in turn a context that cannot end, the loop's, and one of
		// their own that ends after it.
		rctx, end := context.Background(), context.CancelFunc(func() {})
		switch i % 3 {
		case 1:
			rctx = loop
		case 2:
			rctx, end = context.WithCancel(ctx)
		}
		m := p.receive(rctx, t, i)
		end()
		if m == prevR {
			t.Fatalf("message %d got the object of the message before", i)
		}
		prevR = m
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Finish(); !errors.Is(err, ipl.ErrMessageFinished) {
			t.Fatalf("second Finish of read message %d: %v, want ErrMessageFinished", i, err)
		}
		if _, err := m.ReadInt64(); !errors.Is(err, ipl.ErrMessageFinished) {
			t.Fatalf("read after Finish of message %d: %v, want ErrMessageFinished", i, err)
		}
	}
}

// TestCancelledReceivesLoseNothing: Receives whose contexts end before, during or after
// their wait (a loop's context, and contexts of their own, some cancelled by another
// goroutine while the Receive waits) take every message once and in order.
func TestCancelledReceivesLoseNothing(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the instances' own cleanup
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := newDiedPair(ctx, t)
	const n = 300
	sent := make(chan error, 1)
	go func() {
		for i := range int64(n) {
			w, err := p.sp.NewMessage(ctx)
			if err == nil {
				err = w.WriteInt64(i)
			}
			if err == nil {
				_, err = w.Finish()
			}
			if err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	loop, endLoop := context.WithCancel(ctx)
	defer endLoop()
	for i, try := int64(0), 0; i < n; try++ {
		rctx, end := loop, context.CancelFunc(func() {})
		var cut chan struct{}
		switch try % 4 {
		case 1:
			rctx, end = context.WithCancel(ctx)
			end() // ended before the Receive
		case 2:
			rctx, end = context.WithCancel(ctx)
			cut = make(chan struct{})
			go func() { end(); close(cut) }() // ends during the wait, or before or after it
		case 3:
			rctx, end = context.WithCancel(ctx)
		}
		m, err := p.rp.Receive(rctx)
		end()
		if cut != nil {
			<-cut
		}
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("receive %d: %v", i, err)
			}
			continue
		}
		v, err := m.ReadInt64()
		if _, ferr := m.Finish(); err != nil || ferr != nil || v != i {
			t.Fatalf("message %d arrived as %d (%v, %v)", i, v, err, ferr)
		}
		i++
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
}
