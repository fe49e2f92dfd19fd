package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// profiled runs measure under a CPU profile written to dir/pP-rankR.pprof when dir is
// set (-cpu-profile), so that each rank's share of a collective's time (message set-up,
// system calls, hand-offs between goroutines) can be read with go tool pprof.
func profiled(dir string, p, rank int, measure func() ([]collPoint, error)) ([]collPoint, error) {
	if dir == "" {
		return measure()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("-cpu-profile: %w", err)
	}
	stop, err := startCPUProfile(filepath.Join(dir, fmt.Sprintf("p%d-rank%d.pprof", p, rank)))
	if err != nil {
		return nil, fmt.Errorf("-cpu-profile: %w", err)
	}
	pts, err := measure()
	if cerr := stop(); cerr != nil && err == nil {
		err = fmt.Errorf("-cpu-profile: %w", cerr)
	}
	return pts, err
}
