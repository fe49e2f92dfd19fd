package vcluster

import (
	"os"
	"testing"
)

// EnvRequire, when set (CI sets it as root), turns a test's skip for a missing tool or
// privilege into a failure: what CI can run must not pass unnoticed by skipping.
const EnvRequire = "IBIS_VCLUSTER_REQUIRE"

// SkipOrFail skips t with why where this machine lacks what the test needs, or fails it
// when EnvRequire is set. Tests across namespaces, SLURM and mpirun call it.
func SkipOrFail(t testing.TB, why any) {
	t.Helper()
	if os.Getenv(EnvRequire) != "" {
		t.Fatalf("%s is set, but: %v", EnvRequire, why)
	}
	t.Skip(why)
}
