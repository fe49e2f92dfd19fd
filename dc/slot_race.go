//go:build race

package dc

import "sync/atomic"

// slot is one place in the deque's ring; under the race detector an atomic pointer, so
// that a thief's discarded read of a reused slot is not reported (see deque).
type slot struct{ t atomic.Pointer[task] }

func (s *slot) load() *task   { return s.t.Load() }
func (s *slot) store(t *task) { s.t.Store(t) }
