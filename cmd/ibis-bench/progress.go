package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Progress lines start after progressDelay and come at most once per progressEvery,
// so short runs print none and long ones say where they are without flooding.
const (
	progressDelay = 3 * time.Second
	progressEvery = 2 * time.Second
)

// newProgress returns the env.Progress function: it writes "ibis-bench NAME: ..." lines
// to w, the latest message at most once per progressEvery once the run has lasted
// progressDelay; quiet makes it a no-op. It is safe for concurrent use.
func newProgress(w io.Writer, name string, quiet bool) func(format string, a ...any) {
	if quiet {
		return func(string, ...any) {}
	}
	var mu sync.Mutex
	start := time.Now()
	var last time.Time
	return func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if now.Sub(start) < progressDelay || now.Sub(last) < progressEvery {
			return
		}
		last = now
		fmt.Fprintf(w, "ibis-bench %s: %s (%s)\n", name, fmt.Sprintf(format, a...), now.Sub(start).Round(time.Second))
	}
}
