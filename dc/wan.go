package dc

import "time"

// maxWideAreaBackoff caps the wait between refused wide-area steal requests of CRS: a
// process whose site has no other process asks at least this often, so that work that
// appears elsewhere is found within it.
const maxWideAreaBackoff = 100 * time.Millisecond

// wanState is CRS's asynchronous wide-area steal (guarded by the runtime's mu): at most
// one request is outstanding, and after a refusal the next waits, from one measured
// wide-area round trip doubling per refusal in a row up to maxWideAreaBackoff, until a
// request brings a job. Without the wait a process alone in its site asked again the
// moment a refusal arrived, one request per round trip for as long as it was idle.
type wanState struct {
	busy  bool          // a request is outstanding
	sent  time.Time     // when it left
	rtt   time.Duration // the smoothed round trip of answered requests
	fails int           // requests refused (or lost) in a row
	next  time.Time     // no request before this
}

// mayAsk reports whether a new request may leave now.
func (w *wanState) mayAsk(now time.Time) bool { return !w.busy && !now.Before(w.next) }

// asking records a request leaving now.
func (w *wanState) asking(now time.Time) {
	w.busy = true
	w.sent = now
}

// succeeded records an answer with a job: the next request may leave at once.
func (w *wanState) succeeded(now time.Time) {
	w.answered(now)
	w.fails = 0
	w.next = time.Time{}
}

// refused records a refusal (answered: the victim said so; otherwise the request was
// lost with its victim or timed out) and sets when the next request may leave.
func (w *wanState) refused(now time.Time, answered bool) {
	if answered {
		w.answered(now)
	} else {
		w.busy = false
	}
	w.fails++
	w.next = now.Add(w.backoff())
}

// answered ends the outstanding request and folds its round trip into rtt.
func (w *wanState) answered(now time.Time) {
	w.busy = false
	rtt := now.Sub(w.sent)
	if rtt <= 0 {
		return
	}
	if w.rtt == 0 {
		w.rtt = rtt
	} else {
		w.rtt = (3*w.rtt + rtt) / 4
	}
}

// backoff is the wait after fails refusals in a row: the round trip (at least
// minBackoff), doubled per refusal after the first, at most maxWideAreaBackoff.
func (w *wanState) backoff() time.Duration {
	d := max(w.rtt, minBackoff)
	for i := 1; i < w.fails && d < maxWideAreaBackoff; i++ {
		d *= 2
	}
	return min(d, maxWideAreaBackoff)
}

// wait is how long an idle process alone in its site waits for news: until the next
// request may leave, or (one outstanding) until it times out after stealTimeout.
func (w *wanState) wait(now time.Time, stealTimeout time.Duration) time.Duration {
	var d time.Duration
	if w.busy {
		d = w.sent.Add(stealTimeout).Sub(now)
	} else {
		d = w.next.Sub(now)
	}
	return max(d, minBackoff)
}
