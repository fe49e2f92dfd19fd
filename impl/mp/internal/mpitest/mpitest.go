//go:build mpi

// Package mpitest runs parts of a test binary as the ranks of an mpirun job, for the
// tests of impl/mp and its engine.
package mpitest

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/selfexec"
)

// EnvRank is set by the launcher for every rank; a test that finds it set plays its
// part as a rank instead of launching.
const EnvRank = "IBIS_MPITEST"

// Rank returns this process's MPI_COMM_WORLD rank as the launcher (Open MPI's mpirun
// or a PMIx launcher) told it, and whether the process runs as a rank of Run.
func Rank() (int, bool) {
	if os.Getenv(EnvRank) == "" {
		return 0, false
	}
	for _, k := range []string{"OMPI_COMM_WORLD_RANK", "PMIX_RANK"} {
		if v, err := strconv.Atoi(os.Getenv(k)); err == nil {
			return v, true
		}
	}
	return 0, true // started without a launcher: an MPI singleton
}

// EnvArgs adds options to every mpirun of Run (for example "--mca pml ob1 --mca btl
// self,tcp" for Open MPI's TCP transport).
const EnvArgs = "IBIS_MPITEST_MPIRUN_ARGS"

// Args are the mpirun options for np ranks on this machine: as root mpirun needs
// --allow-run-as-root, and more ranks than cores need --oversubscribe; then EnvArgs.
func Args(np int) []string {
	args := []string{"-np", strconv.Itoa(np), "--oversubscribe", "--bind-to", "none"}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	return append(args, strings.Fields(os.Getenv(EnvArgs))...)
}

// Run starts np ranks of this test binary under mpirun, each running only the test
// named run (a -test.run pattern), with extra environment variables, and fails t
// when the job fails or outlives timeout. It returns the job's combined output. With
// np 0 it starts the binary once without mpirun: an MPI singleton.
func Run(t *testing.T, np int, run string, timeout time.Duration, env ...string) string {
	t.Helper()
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatalf("mpirun not found (apt-get install openmpi-bin libopenmpi-dev): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	opts := []selfexec.Option{selfexec.WithEnv(append(env, EnvRank+"=1")...), selfexec.WithCombinedOutput()}
	if np > 0 {
		// At the end of ctx mpirun gets SIGTERM, which it passes on to the ranks and cleans
		// up (SIGKILL would orphan them).
		opts = append(opts, selfexec.WithLauncher(mpirun, Args(np)...))
	}
	c, err := selfexec.Run(ctx, []string{"-test.run=" + run, "-test.v", "-test.count=1"}, opts...)
	out := c.Output()
	if err != nil {
		t.Fatalf("mpirun -np %d (%s): %v\n%s", np, run, err, out)
	}
	return out
}
