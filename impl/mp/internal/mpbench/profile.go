//go:build mpi

package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

// cpuProfile is the -cpuprofile flag: where each rank writes its CPU profile.
var cpuProfile string

// memProfile is the -memprofile flag: where each rank writes a profile of every
// allocation (FILE.rank0, FILE.rank1).
var memProfile string

// mpOnly is the -mp-only flag: only impl/mp is timed, so that a profile shows its path alone.
var mpOnly bool

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

// startMemProfile records every allocation from now on and returns the function that
// writes them to file.
func startMemProfile(file string) func() error {
	runtime.MemProfileRate = 1
	return func() error {
		f, err := os.Create(file)
		if err != nil {
			return err
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			_ = f.Close()
			return err
		}
		return f.Close()
	}
}
