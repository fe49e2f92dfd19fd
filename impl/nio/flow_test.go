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
	sent := sendNumbered(ctx, sp, messages, words)
	// Nobody reads until the event loop has paused the connection.
	awaitHook(ctx, t, &seen.pauses, sent, "the connection being paused")
	receiveNumbered(ctx, t, rp, sent, messages, words)
	t.Logf("%d pauses", seen.pauses.Load())
}
