//go:build mpi

package test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/ibisgo/ibis/impl/mp"
	"github.com/ibisgo/ibis/internal/selfexec"
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

// TestHelloOverMPI runs what README.md shows for MPI: examples/hello built with -tags mpi
// as an mpirun job of three ranks with -impl mp.
func TestHelloOverMPI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example under mpirun")
	}
	bin := filepath.Join(t.TempDir(), "hello")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-tags", "mpi", "-o", bin, "../examples/hello")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	args := conformance.MPIRunArgs(3)
	prog := []string{"-impl", "mp", "-n", "4", "-timeout", "2m"}
	c, err := selfexec.Run(ctx, prog, selfexec.WithProgram(bin), selfexec.WithLauncher("mpirun", args...), selfexec.WithCombinedOutput())
	text := c.Output()
	if err != nil {
		t.Fatalf("mpirun %v %s %v: %v\n%s", args, bin, prog, err, text)
	}
	if !strings.Contains(text, "server: served 8 requests") {
		t.Errorf("the server did not serve both clients' 4 requests:\n%s", text)
	}
	if n := strings.Count(text, "(want "); n != 8 {
		t.Errorf("%d client replies, want 8:\n%s", n, text)
	}
}
