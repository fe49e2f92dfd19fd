package cluster_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/internal/vcluster"
)

// upBound bounds the build of a virtual cluster; with SLURM it takes a few seconds.
const upBound = 2 * time.Minute

// newCluster brings up a virtual cluster of n hosts for mpirun, with SLURM when slurm is
// set, that the test's cleanup removes, or skips the test (fails it under vcluster.EnvRequire) when
// this machine cannot build one, saying why. It logs how long the Up took.
func newCluster(t *testing.T, n int, slurm bool) *vcluster.Cluster {
	t.Helper()
	needs := []vcluster.Need{vcluster.NeedMPIRun}
	opts := []vcluster.Option{vcluster.WithHosts(n)}
	if slurm {
		needs = append(needs, vcluster.NeedSlurm)
		opts = append(opts, vcluster.WithSlurm())
	}
	if err := vcluster.Unavailable(needs...); err != nil {
		vcluster.SkipOrFail(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), upBound)
	defer cancel()
	start := time.Now()
	c, err := vcluster.Up(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("virtual cluster %s of %d hosts (SLURM: %v) up in %v", c.ID(), n, slurm, time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("removing the virtual cluster: %v", err)
		}
	})
	return c
}

// srunLauncher starts a pool as a user on a cluster does: `srun [args] exe -impl IMPL ...`
// on the first host, with the cluster's SLURM_CONF and no IBIS_* variable, so that the
// processes form their pool from srun's environment alone. Its job is the one srun
// process, whose output holds every task's.
type srunLauncher struct {
	c    *vcluster.Cluster
	impl string   // "" leaves -impl out (the program's default, tcp)
	args []string // srun's options before the program, besides -n
	env  []string // more environment for srun and its tasks (the bad cases' IBIS_*)
	// initCrash: a task that crashed inside MPI_Init (SIGSEGV at PC 0 under Debian's
	// Open MPI 4.1.4 with PMIx, docs/CLUSTERS.md) makes the step start again.
	initCrash bool
}

func (l srunLauncher) restart(err error) bool {
	s := err.Error()
	return l.initCrash && strings.Contains(s, "SIGSEGV") && strings.Contains(s, "_Cfunc_mp_init")
}

func (l srunLauncher) why() string { return "a crash inside MPI_Init (Open MPI with PMIx)" }

func (l srunLauncher) start(ctx context.Context, t *testing.T, exe string, np int, args ...string) *job {
	t.Helper()
	prefix, err := l.c.Exec("h1")
	if err != nil {
		t.Fatal(err)
	}
	launcher := append(append(prefix[1:], "srun", "-n", strconv.Itoa(np)), l.args...)
	env := append([]string{"SLURM_CONF=" + l.c.SlurmConf()}, l.env...)
	return startLaunched(ctx, t, prefix[0], launcher, exe, implArgs(l.impl, args), env)
}

// mpirunLauncher starts a pool with Open MPI's mpirun on the first host across the
// cluster's hosts (vcluster's MPIRunArgs: rank i on host i mod N), with no IBIS_*
// variable: tcp and nio form their pool from OMPI_*, mp from the MPI job.
type mpirunLauncher struct {
	c    *vcluster.Cluster
	impl string
}

func (l mpirunLauncher) start(ctx context.Context, t *testing.T, exe string, np int, args ...string) *job {
	t.Helper()
	prefix, err := l.c.Exec("h1")
	if err != nil {
		t.Fatal(err)
	}
	launcher := append(append(prefix[1:], "mpirun"), l.c.MPIRunArgs(np)...)
	return startLaunched(ctx, t, prefix[0], launcher, exe, implArgs(l.impl, args), nil)
}

// implArgs puts -impl IMPL before the program's arguments.
func implArgs(impl string, args []string) []string {
	if impl == "" {
		return args
	}
	return append([]string{"-impl", impl}, args...)
}

// startLaunched starts `launcher... exe args...` (srun or mpirun on a host) without this
// process's IBIS_* and SLURM_* variables, and returns it as a job of one process.
func startLaunched(ctx context.Context, t *testing.T, name string, launcher []string, exe string, args, env []string) *job {
	t.Helper()
	c, err := selfexec.Start(ctx, args, selfexec.WithProgram(exe), selfexec.WithLauncher(name, launcher...),
		selfexec.WithoutEnv("IBIS_", "SLURM_", "OMPI_"), selfexec.WithEnv(env...))
	if err != nil {
		t.Fatalf("starting %s %v %s %v: %v", name, launcher, exe, args, err)
	}
	t.Cleanup(c.Close)
	return &job{procs: []*proc{{rank: 0, c: c}}}
}

// sameResult runs p under l and requires want, its result on 127.0.0.1.
func sameResult(t *testing.T, l launcher, p program, exe, want, where string) {
	t.Helper()
	start := time.Now()
	got := runResult(t, l, p, exe)
	if got != want {
		t.Errorf("%s: %q\non 127.0.0.1: %q", where, got, want)
		return
	}
	t.Logf("%s, as on 127.0.0.1 (%v): %s", where, time.Since(start).Round(time.Millisecond), got)
}
