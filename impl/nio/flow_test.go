package nio

import (
	"context"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

var flowType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO)

// TestReceiverThatFallsBehind: a nonblocking receive port that does not read makes its
// event loop pause the connection (the inbox stays bounded, TCP holds the sender back),
// and once the receiver reads, every byte arrives in order.
func TestReceiverThatFallsBehind(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	seen := withHooks(t)
	ib, rp := openWithIn(ctx, t, flowType, ipl.WithProperty(PropertyReceive, "nonblocking"), ipl.WithMaxMessageSize(8<<20))
	sp := sendToIn(ctx, t, ib, flowType, "")
	const messages, words = 48, 1 << 17 // 48 MiB in all, far more than the socket buffers
	sent := make(chan error, 1)
	go func() {
		data := make([]int64, words)
		for i := range messages {
			for k := range data {
				data[k] = int64(i*words + k)
			}
			m, err := sp.NewMessage(ctx)
			if err != nil {
				sent <- err
				return
			}
			_ = m.WriteArray(data)
			if _, err := m.Finish(); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	// Nobody reads until the event loop has paused the connection.
	for seen.pauses.Load() == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("the connection was never paused")
		case err := <-sent:
			t.Fatalf("the sender finished (%v) although nobody read", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
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
	t.Logf("%d pauses", seen.pauses.Load())
}
