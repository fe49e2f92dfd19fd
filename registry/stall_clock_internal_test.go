package registry

import (
	"testing"
	"time"
)

// A tick later than a whole period counts, by what it was late, as time
// the owner did not run, which a silence measured across it leaves out;
// ticks within a period of their due time count for nothing.
func TestStallClock(t *testing.T) {
	k := newStallClock()
	m := k.mark()
	if late := k.tick(1500*time.Millisecond, time.Second); late != 0 {
		t.Fatalf("a tick half a period late counted as a stall of %v", late)
	}
	if late := k.tick(5*time.Second, time.Second); late != 4*time.Second {
		t.Fatalf("a tick 4s late counted as a stall of %v", late)
	}
	if s := k.since(m); s > -3*time.Second {
		t.Fatalf("silence across a 4s stall measured %v, want the stall left out", s)
	}
	if s := k.since(k.mark()); s < 0 || s > time.Minute {
		t.Fatalf("silence since a fresh mark: %v", s)
	}
}
