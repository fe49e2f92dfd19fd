package nio

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// TestFullSocketResumes: a nonblocking send port whose receiver reads nothing fills
// its socket, and the event loop waits for it (descriptor.go); once the receiver reads,
// the waits end, and every message arrives in order, intact.
func TestFullSocketResumes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	pt := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO)
	seen := withHooks(t)
	ib, rp := openWithIn(ctx, t, pt, ipl.WithProperty(PropertySend, "nonblocking"), ipl.WithProperty(PropertyReceive, "blocking"),
		ipl.WithMaxMessageSize(8<<20))
	sp := sendToIn(ctx, t, ib, pt, "")
	const messages, words = 32, 1 << 17 // 32 MiB in all, far more than the socket buffers
	sent := sendNumbered(ctx, sp, messages, words)
	// Nobody reads until the event loop waits for the full socket.
	awaitHook(ctx, t, &seen.fulls, sent, "a full socket")
	receiveNumbered(ctx, t, rp, sent, messages, words)
	t.Logf("%d waits for a full socket", seen.fulls.Load())
}

// TestFullSocketReceiverCloses: a wait for a full socket ends when the receiver closes
// its port: the sender's message fails with a lost connection, and the instance closes
// with no wait left behind (the package's leak check).
func TestFullSocketReceiverCloses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	pt := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO)
	seen := withHooks(t)
	ib, rp := openWithIn(ctx, t, pt, ipl.WithProperty(PropertySend, "nonblocking"), ipl.WithProperty(PropertyReceive, "blocking"),
		ipl.WithMaxMessageSize(64<<20))
	sp := sendToIn(ctx, t, ib, pt, "")
	sent := make(chan error, 1)
	go func() {
		m, err := sp.NewMessage(ctx)
		if err == nil {
			err = m.WriteArray(make([]int64, 4<<20)) // 32 MiB: far more than the socket buffers
		}
		if m != nil {
			if _, ferr := m.Finish(); err == nil {
				err = ferr
			}
		}
		sent <- err
	}()
	awaitHook(ctx, t, &seen.fulls, sent, "a full socket")
	if err := rp.Close(); err != nil {
		t.Logf("closing the receive port: %v", err)
	}
	select {
	case err := <-sent:
		if !errors.Is(err, ipl.ErrConnectionLost) {
			t.Fatalf("the sender's message ended with %v, want ErrConnectionLost", err)
		}
	case <-ctx.Done():
		t.Fatal("the sender still waits after its receiver closed")
	}
	if err := ib.Close(); err != nil {
		t.Fatal(err)
	}
}
