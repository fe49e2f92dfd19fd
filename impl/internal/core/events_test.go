package core

import (
	"testing"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"
)

// Registry events that the program never reads (other members can send signals at will)
// are held up to maxPendingEvents; past it the oldest are dropped, in order.
func TestEventQueueIsBounded(t *testing.T) {
	q := &eventQueue{in: &Instance{log: zap.NewNop()}, wake: make(chan struct{}, 1)}
	const n = maxPendingEvents + 1000
	for i := range n {
		q.push(ipl.Event{Type: ipl.EventSignal, Name: "s", Member: ipl.IbisIdentifier{ID: string(rune('a' + i%26))}})
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) != maxPendingEvents || q.dropped != 1000 {
		t.Fatalf("%d events held, %d dropped; want %d and 1000", len(q.pending), q.dropped, maxPendingEvents)
	}
}
