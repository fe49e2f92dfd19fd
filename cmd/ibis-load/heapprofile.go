package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

// envHeapProfile names a file prefix: when set, the receiver writes a heap profile to
// PREFIX.N every half second while it receives (N counting up), so that what its
// peak held can be looked at with go tool pprof. A tool for measuring, not a flag.
const envHeapProfile = "IBIS_LOAD_HEAPPROFILE"

// heapProfiles writes the profiles until ctx ends.
func heapProfiles(ctx context.Context, prefix string) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		runtime.GC()
		f, err := os.Create(fmt.Sprintf("%s.%d", prefix, n))
		if err != nil {
			return
		}
		_ = pprof.WriteHeapProfile(f)
		_ = f.Close()
	}
}
