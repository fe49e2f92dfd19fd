package registry

import (
	"sync/atomic"
	"time"
)

// stallClock measures silences without counting time in which its owner
// (the server, or a client's session) did not run itself: stopped with
// SIGSTOP, its virtual machine paused, swapped out or starved of CPU. That
// time says nothing about the peer, whose frames may be waiting in the
// socket or whose process was stopped alike. A goroutine that only ticks
// (the server's watchClock, a session's writer) reports each tick's
// elapsed time; a tick later than a whole period counts, by what it was
// late, as a stall. Readings are offsets of the monotonic clock from base.
type stallClock struct {
	base    time.Time
	stalled atomic.Int64 // ns of stalls in all
}

func newStallClock() stallClock { return stallClock{base: time.Now()} }

// now returns the clock's reading.
func (k *stallClock) now() time.Duration { return time.Since(k.base) }

// tick records a tick that came elapsed after the one before, which was
// due period after it, and returns what counted as a stall (0: none).
func (k *stallClock) tick(elapsed, period time.Duration) time.Duration {
	late := elapsed - period
	if late <= period {
		return 0
	}
	k.stalled.Add(int64(late))
	return late
}

// heardMark is the moment a peer was last heard of, to measure its
// silence from.
type heardMark struct{ at, stalled time.Duration }

// mark returns the mark of now.
func (k *stallClock) mark() heardMark {
	return heardMark{at: k.now(), stalled: time.Duration(k.stalled.Load())}
}

// since returns how long it is since m, less the stalls recorded since.
func (k *stallClock) since(m heardMark) time.Duration {
	return k.now() - m.at - (time.Duration(k.stalled.Load()) - m.stalled)
}
