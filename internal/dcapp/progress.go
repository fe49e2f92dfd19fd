package dcapp

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ibisgo/ibis/dc"
)

// showProgress prints a progress line on w every interval while the run goes on, from
// the root only (the others print nothing), as sor and barneshut print theirs: what the
// root sees of the run (its own jobs, the ones stolen from it, the pool's size). The
// returned function stops it and returns once it has stopped.
func (a App) showProgress(rt *dc.Runtime, interval time.Duration, w io.Writer) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		start := time.Now()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if !rt.Root() {
				continue
			}
			fmt.Fprintln(w, a.progressLine(rt.Progress(), time.Since(start)))
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// progressLine is one progress line.
func (a App) progressLine(p dc.Progress, elapsed time.Duration) string {
	line := fmt.Sprintf("%s: %.1f s, the root (rank %d) ran %d jobs and spawned %d; %d stolen from it by the other %d process(es)",
		a.Name, elapsed.Seconds(), launchRank(), p.Executed, p.Spawned, p.Given, p.Processes-1)
	if p.Requeued > 0 {
		line += fmt.Sprintf("; %d run again after their thief was lost", p.Requeued)
	}
	return line
}
