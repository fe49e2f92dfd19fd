package nio

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// sendNumbered sends messages arrays of words int64s on sp from a goroutine of its
// own, word k of message i being i*words+k, and reports the outcome on the channel.
func sendNumbered(ctx context.Context, sp ipl.SendPort, messages, words int) <-chan error {
	sent := make(chan error, 1)
	go func() {
		data := make([]int64, words)
		for i := range messages {
			for k := range data {
				data[k] = int64(i*words + k)
			}
			m, err := sp.NewMessage(ctx)
			if err == nil {
				err = m.WriteArray(data)
			}
			if m != nil {
				if _, ferr := m.Finish(); err == nil {
					err = ferr
				}
			}
			if err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	return sent
}

// awaitHook waits, reading nothing, until the hook counter n has counted something;
// what names it for the failure. A sender that finishes meanwhile fails the test.
func awaitHook(ctx context.Context, t *testing.T, n *atomic.Int64, sent <-chan error, what string) {
	t.Helper()
	for n.Load() == 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("%s never happened", what)
		case err := <-sent:
			t.Fatalf("the sender finished (%v) although nobody read", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// receiveNumbered receives what sendNumbered sent and checks every word, then the
// sender's outcome.
func receiveNumbered(ctx context.Context, t *testing.T, rp ipl.ReceivePort, sent <-chan error, messages, words int) {
	t.Helper()
	got := make([]int64, words)
	for i := range messages {
		m, err := rp.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.ReadArray(got); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
		for k, v := range got {
			if v != int64(i*words+k) {
				t.Fatalf("message %d word %d is %d", i, k, v)
			}
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
}
