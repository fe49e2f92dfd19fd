package nio

import (
	"sync/atomic"
	"testing"
)

// counts is what the hooks of the instances a test opens have seen.
type counts struct {
	direct, rests, copied, pauses, fulls atomic.Int64
}

// withHooks makes the instances the test opens from now on count into the returned
// counts, until the test ends. Tests that use it must not run in parallel.
func withHooks(t *testing.T) *counts {
	t.Helper()
	c := new(counts)
	testHooks = &hooks{
		direct: func(rest bool) {
			c.direct.Add(1)
			if rest {
				c.rests.Add(1)
			}
		},
		copied: func(n int) { c.copied.Add(int64(n)) },
		paused: func() { c.pauses.Add(1) },
		full:   func() { c.fulls.Add(1) },
	}
	t.Cleanup(func() { testHooks = nil })
	return c
}
