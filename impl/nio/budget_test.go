package nio

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// The receiver reads a large message of sender A while six other senders fill their
// inboxes (more than the port's budget together, each waiting for the port). A's
// connection is parked for the budget; the port never drains below its low-water mark
// while A's message is read, so A must be resumed when its reader needs bytes, not
// when the port has room.
func TestParkedConnectionResumedForItsReader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ib, rp := openWithIn(ctx, t, flowType, ipl.WithProperty(PropertyReceive, "nonblocking"), ipl.WithMaxMessageSize(64<<20))
	send := func(name string, words int, started chan<- struct{}) chan error {
		ch := make(chan error, 1)
		sp := sendToIn(ctx, t, ib, flowType, name)
		go func() {
			data := make([]int64, words)
			m, err := sp.NewMessage(ctx)
			if err != nil {
				ch <- err
				return
			}
			if started != nil {
				close(started)
			}
			for k := 0; k < words; k += 8192 {
				_ = m.WriteArray(data[k:min(k+8192, words)])
			}
			_, err = m.Finish()
			ch <- err
		}()
		return ch
	}
	a := send("A", 4<<20, nil) // 32 MiB
	m, err := rp.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := make([]int64, 8192)
	if err := m.ReadArray(first); err != nil {
		t.Fatal(err)
	}
	var others []chan error
	for i := range 6 {
		others = append(others, send(fmt.Sprint("B", i), 1<<19, nil)) // 4 MiB each
	}
	time.Sleep(time.Second) // makes it likely that the others have filled their inboxes; not needed to pass
	rest := make([]int64, 8192)
	done := make(chan error, 1)
	go func() {
		for k := 8192; k < 4<<20; k += 8192 {
			if err := m.ReadArray(rest); err != nil {
				done <- err
				return
			}
			time.Sleep(200 * time.Microsecond)
		}
		done <- nil
	}()
	// A reader stuck for good is ended by closing the Ibis when the test's context
	// runs out; its error then fails the test.
	stop := context.AfterFunc(ctx, func() { _ = ib.Close() })
	defer stop()
	if err := <-done; err != nil {
		t.Fatalf("reading A's message did not complete (its parked connection was not resumed?): %v", err)
	}
	if _, err := m.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := <-a; err != nil {
		t.Fatal(err)
	}
	for range 6 {
		m, err := rp.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range others {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
}
