//go:build mpi

package test

import (
	"testing"

	_ "github.com/ibisgo/ibis/impl/mp"
	"github.com/ibisgo/ibis/test/conformance"
)

// TestConformanceMP runs the IPL conformance suite over impl/mp: each case is an mpirun
// job of this binary with 2 and with 4 ranks (needs Open MPI and -tags mpi).
func TestConformanceMP(t *testing.T) {
	conformance.RunMPI(t, conformance.Options{Impl: "mp"}, []int{2, 4}, "TestConformanceMPParentRank")
}

// TestConformanceMPParentRank is rank 0's part of each job of TestConformanceMP; run on
// its own it skips.
func TestConformanceMPParentRank(t *testing.T) {
	conformance.RunMPIParent(t, conformance.Options{Impl: "mp"})
}
