package conformance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/ipl"
)

// Running the suite under mpirun, for implementations whose pool is an MPI job (impl/mp).
// Each case is one mpirun job of the test binary: rank 0 runs the parent's part inside
// a test (RunMPIParent, so it asserts with a real *testing.T), ranks 1 to children play
// the children, and any further ranks are idle members that join and close. The
// implementation makes the pool from the job by itself, so no registry is started here.
const (
	// envMPI marks the processes of such a job.
	envMPI = "IBIS_CONFORMANCE_MPI"
	// EnvMPIRunArgs adds options to every mpirun of RunMPI (for example
	// "--mca btl self,tcp" to run the suite over Open MPI's TCP transport).
	EnvMPIRunArgs = "IBIS_CONFORMANCE_MPIRUN_ARGS"
)

// mpiRank returns the MPI_COMM_WORLD rank of a process of a RunMPI job, as Open MPI's
// launcher (or a PMIx one) tells it.
func mpiRank() (int, bool) {
	if os.Getenv(envMPI) == "" {
		return 0, false
	}
	for _, k := range []string{"OMPI_COMM_WORLD_RANK", "PMIX_RANK"} {
		if v, err := strconv.Atoi(os.Getenv(k)); err == nil {
			return v, true
		}
	}
	return 0, true
}

func isMPIParent() bool {
	r, ok := mpiRank()
	return ok && r == 0
}

// MPIRunArgs are the mpirun options for np ranks on this machine: --oversubscribe for
// more ranks than cores, --allow-run-as-root when root, and EnvMPIRunArgs.
func MPIRunArgs(np int) []string {
	args := []string{"-np", strconv.Itoa(np), "--oversubscribe", "--bind-to", "none"}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	return append(args, strings.Fields(os.Getenv(EnvMPIRunArgs))...)
}

// RunMPI runs every case of the suite as an mpirun job of np ranks, for each np given.
// parentTest names the test function of the calling package that calls RunMPIParent;
// rank 0 runs it. Cases that need more ranks than np, and cases that kill a member
// (MPI aborts the whole job when a rank dies, by design), are skipped with the reason.
func RunMPI(t *testing.T, opts Options, nps []int, parentTest string) {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatalf("mpirun not found (apt-get install openmpi-bin libopenmpi-dev): %v", err)
	}
	list := sortedCases()
	for _, np := range nps {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			for _, tc := range list {
				t.Run(tc.name, func(t *testing.T) {
					switch {
					case tc.kills:
						t.Skip("kills a member: under MPI a dead rank aborts the whole job, by design")
					case tc.children+1 > np:
						t.Skipf("needs %d ranks, the job has %d", tc.children+1, np)
					}
					runMPICase(t, mpirun, opts, np, tc, parentTest)
				})
			}
		})
	}
}

func runMPICase(t *testing.T, mpirun string, opts Options, np int, tc *testCase, parentTest string) {
	ctx, cancel := context.WithTimeout(context.Background(), caseTimeout+30*time.Second)
	defer cancel()
	env := []string{envMPI + "=1", envCase + "=" + tc.name, envProps + "=" + encodeProps(opts.Properties),
		ipl.EnvImpl + "=" + opts.Impl}
	if tc.messageTimeout != 0 {
		env = append(env, ipl.EnvMessageTimeout+"="+tc.messageTimeout.String())
	}
	if tc.childMaxMessage != 0 { // rank 0, the parent, sets its own (RunMPIParent)
		env = append(env, fmt.Sprintf("%s=%d", ipl.EnvMaxMsg, tc.childMaxMessage))
	}
	// Rank 0's embedded registry: the suite's generous failure detection (see heartbeat).
	env = append(env, ipl.EnvHeartbeat+"="+heartbeat.String())
	// At the end of ctx mpirun gets SIGTERM, which it passes on to the ranks and cleans up
	// (SIGKILL would orphan them).
	args := MPIRunArgs(np)
	c, err := selfexec.Run(ctx, []string{"-test.run=^" + parentTest + "$", "-test.v", "-test.count=1"},
		selfexec.WithLauncher(mpirun, args...), selfexec.WithEnv(env...), selfexec.WithCombinedOutput())
	out := c.Output()
	if err != nil {
		t.Errorf("mpirun %s: %v\n%s", strings.Join(args, " "), err, out)
		return
	}
	if !strings.Contains(out, "--- PASS: "+parentTest) {
		t.Errorf("rank 0 did not report a pass of %s:\n%s", parentTest, out)
	}
}

// RunMPIParent plays the parent's part of the case RunMPI launched, as rank 0; outside
// such a job it skips.
func RunMPIParent(t *testing.T, opts Options) {
	if !isMPIParent() {
		t.Skip("runs as rank 0 of the mpirun jobs that RunMPI starts")
	}
	name := os.Getenv(envCase)
	casesMu.Lock()
	tc := cases[name]
	casesMu.Unlock()
	if tc == nil {
		t.Fatalf("unknown case %q", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
	defer cancel()
	popts := []ipl.Option{ipl.WithTag("parent")}
	if tc.messageTimeout != 0 {
		popts = append(popts, ipl.WithMessageTimeout(tc.messageTimeout))
	}
	if tc.childMaxMessage != 0 {
		popts = append(popts, ipl.WithMaxMessageSize(ipl.DefaultMaxMessageSize))
	}
	ib, err := newIbis(ctx, opts.Impl, opts.Properties, popts...)
	if err != nil {
		t.Fatalf("starting the parent's Ibis: %v", err)
	}
	defer func() {
		if err := ib.Close(); err != nil {
			t.Errorf("closing the parent's Ibis: %v", err)
		}
	}()
	if _, err := ib.Registry().Elect(ctx, "parent"); err != nil {
		t.Fatalf("electing the parent: %v", err)
	}
	if err := ib.Registry().WaitUntilPoolClosed(ctx); err != nil {
		t.Fatalf("waiting for the children to join: %v", err)
	}
	e := &Env{Ctx: ctx, Ibis: ib, Index: -1, Parent: ib.Identifier(), T: t}
	e.Children = childrenOf(ib)
	if len(e.Children) != tc.children {
		t.Fatalf("%d children in the pool, want %d", len(e.Children), tc.children)
	}
	tc.parent(e)
}

// runIdle is a rank beyond the case's children: a member that joins, waits for the
// pool to close and closes (which, under MPI, waits for every rank).
func runIdle(ctx context.Context, rank int) int {
	ib, err := newIbis(ctx, os.Getenv(ipl.EnvImpl), decodeProps(os.Getenv(envProps)), ipl.WithTag(fmt.Sprintf("idle-%d", rank)))
	if err != nil {
		fmt.Fprintf(os.Stderr, "idle rank %d: %v\n", rank, err)
		return 1
	}
	defer ib.Close()
	if err := ib.Registry().WaitUntilPoolClosed(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "idle rank %d: waiting for the pool: %v\n", rank, err)
		return 1
	}
	return 0
}
