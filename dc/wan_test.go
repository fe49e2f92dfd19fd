package dc

import (
	"testing"
	"time"
)

// TestWideAreaBackoff follows CRS's wide-area request through refusals: no second
// request while one is outstanding, a wait after each refusal that starts at the
// measured round trip and doubles up to the cap, and none after a success.
func TestWideAreaBackoff(t *testing.T) {
	var w wanState
	t0 := time.Unix(1000, 0)
	if !w.mayAsk(t0) {
		t.Fatal("the first request may not leave")
	}
	w.asking(t0)
	if w.mayAsk(t0.Add(time.Hour)) {
		t.Fatal("a second request may leave while one is outstanding")
	}
	rtt := time.Millisecond
	now := t0.Add(rtt)
	w.refused(now, true)
	want := rtt
	for i := range 12 {
		if got := w.next.Sub(now); got != want {
			t.Fatalf("after %d refusals: wait %v, want %v", i+1, got, want)
		}
		if w.mayAsk(w.next.Add(-time.Nanosecond)) || !w.mayAsk(w.next) {
			t.Fatalf("after %d refusals: the next request is not due exactly at the end of the wait", i+1)
		}
		now = w.next
		w.asking(now)
		now = now.Add(rtt)
		w.refused(now, true)
		want = min(2*want, maxWideAreaBackoff)
	}
	if got := w.next.Sub(now); got != maxWideAreaBackoff {
		t.Fatalf("after many refusals: wait %v, want the cap %v", got, maxWideAreaBackoff)
	}
	w.asking(w.next)
	w.succeeded(w.next.Add(rtt))
	if !w.mayAsk(w.next) || w.fails != 0 {
		t.Fatal("a success does not clear the back-off")
	}
	// A request lost with its victim counts as refused without a round trip.
	w.asking(now)
	w.refused(now.Add(time.Hour), false)
	if w.busy || w.fails != 1 || w.rtt != rtt {
		t.Fatalf("a lost request: busy %v, fails %d, rtt %v", w.busy, w.fails, w.rtt)
	}
}
