//go:build mpi

package main

import (
	"os"
	"runtime/pprof"
)

// cpuProfile is the -cpuprofile flag: where each rank writes its CPU profile.
var cpuProfile string

// startProfile starts a CPU profile into file and returns the function that ends it.
func startProfile(file string) (func(), error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
