package core

import (
	"testing"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/fifo"
	"github.com/ibisgo/ibis/ipl"
)

// Registry events that the program never reads (other members can send signals at will)
// are held up to maxPendingEvents; past it the oldest are dropped, in order.
func TestEventQueueIsBounded(t *testing.T) {
	q := &eventQueue{in: &Instance{log: zap.NewNop()}, pending: fifo.New[ipl.Event]()}
	const n = maxPendingEvents + 1000
	for i := range n {
		q.push(ipl.Event{Type: ipl.EventSignal, Name: "s", Member: ipl.IbisIdentifier{ID: string(rune('a' + i%26))}})
	}
	held, _ := q.pending.Take(nil)
	if len(held) != maxPendingEvents || q.dropped.Load() != 1000 {
		t.Fatalf("%d events held, %d dropped; want %d and 1000", len(held), q.dropped.Load(), maxPendingEvents)
	}
	if first := held[0].Member.ID; first != string(rune('a'+1000%26)) {
		t.Fatalf("the oldest held event is from %q: the oldest were not the ones dropped", first)
	}
}
