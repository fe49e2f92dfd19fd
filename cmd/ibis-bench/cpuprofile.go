package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
)

// startCPUProfile starts a CPU profile of this process into path ("" profiles
// nothing) and returns what stops it: the first call ends the profile and closes the
// file, later calls do nothing (so it may also be deferred).
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	fh, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(fh); err != nil {
		_ = fh.Close()
		return nil, fmt.Errorf("CPU profile: %w", err)
	}
	var once sync.Once
	return func() error {
		var cerr error
		once.Do(func() {
			pprof.StopCPUProfile()
			cerr = fh.Close()
		})
		return cerr
	}, nil
}
