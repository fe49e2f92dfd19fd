//go:build mpi

package mpj_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/ibisgo/ibis/impl/mp"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/test/conformance"
)

// TestMPIRun runs the whole suite (suite_test.go) under mpirun on impl mp, for
// np = 2, 3 and 4: each job is this test binary started np times by mpirun with
// -impl mp semantics (IBIS_IMPL=mp); the pool is the MPI job, and each process's rank
// is its MPI rank (ipl.LaunchRankOf), which checkRanks compares with Open MPI's own
// OMPI_COMM_WORLD_RANK. Needs Open MPI and -tags mpi.
func TestMPIRun(t *testing.T) {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatalf("mpirun not found (apt-get install openmpi-bin libopenmpi-dev): %v", err)
	}
	for _, np := range []int{2, 3, 4} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), poolTimeout+30*time.Second)
			defer cancel()
			args := conformance.MPIRunArgs(np)
			start := time.Now()
			// At the end of ctx mpirun gets SIGTERM, which it passes on to the ranks.
			c, err := selfexec.Run(ctx, []string{selfexec.NoTests}, selfexec.WithLauncher(mpirun, args...),
				selfexec.WithCombinedOutput(), selfexec.WithEnv(envChild+"=1", envMPI+"=1", ipl.EnvImpl+"=mp"))
			if err != nil {
				t.Fatalf("mpirun %v: %v\n%s", args, err, c.Output())
			}
			out := c.Output()
			for r := range np {
				if line := fmt.Sprintf("mpj suite passed: rank %d of %d on mp\n", r, np); !strings.Contains(out, line) {
					t.Errorf("no %q in the job's output:\n%s", line, out)
				}
			}
			t.Logf("np=%d: %v", np, time.Since(start).Round(time.Millisecond))
		})
	}
}

// mpiWorldRank returns Open MPI's rank and size of this process when it is a rank of
// TestMPIRun's jobs.
func mpiWorldRank() (rank, size int, ok bool) {
	if os.Getenv(envMPI) == "" {
		return 0, 0, false
	}
	r, err1 := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_RANK"))
	s, err2 := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_SIZE"))
	return r, s, err1 == nil && err2 == nil
}

func init() { launchRank = mpiWorldRank }
