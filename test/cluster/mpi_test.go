//go:build mpi

package cluster_test

import (
	"context"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"testing"

	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/internal/testbin"
)

// TestAppsOverMPIOnCluster runs examples/hello, apps/sor, apps/barneshut and apps/fib built
// with -tags mpi on impl/mp across a virtual cluster of 4 hosts with SLURM, started both
// ways a user starts an MPI program there: `srun --mpi=pmix -N 4 -n 4 ./prog -impl mp ...`
// and `mpirun -np 4 --map-by node ... ./prog -impl mp ...`, with no IBIS_* setting. The
// results must equal, bit for bit, those of the same binary run on this machine's own
// loopback by `mpirun -np 4 ./prog -impl mp ...`. One cluster serves every variant.
//
// The srun steps run as MPI jobs usually do, with --kill-on-bad-exit (a failed rank ends
// the step instead of leaving the others waiting in MPI), and with PMIX_MCA_gds=hash,
// without which MPI_Init now and then crashes (SIGSEGV at PC 0) under Debian's Open MPI
// 4.1.4 and PMIx 4.2.2 (docs/CLUSTERS.md); with it, rarely still, on a loaded machine: a
// step whose task crashed inside MPI_Init is started again, at most twice, and logged.
// Needs Open MPI's development files to build:
//
//	go test -race -count=1 -tags mpi -run '^TestAppsOverMPIOnCluster$' ./test/cluster/
func TestAppsOverMPIOnCluster(t *testing.T) {
	c := newCluster(t, 4, true)
	ctx, cancel := context.WithTimeout(context.Background(), 2*appBound)
	defer cancel()
	dir := t.TempDir()
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			exe := mpiBinary(ctx, t, dir, p.pkg)
			want := mpiReference(ctx, t, p, exe)
			srun := srunLauncher{c: c, impl: "mp", args: []string{"--mpi=pmix", "-N", "4", "--kill-on-bad-exit=1"},
				env: []string{"PMIX_MCA_gds=hash"}, initCrash: true}
			sameResult(t, srun, p, exe, want,
				"srun --mpi=pmix -N 4 -n 4 "+p.name+" -impl mp")
			sameResult(t, mpirunLauncher{c: c, impl: "mp"}, p, exe, want, "mpirun -np 4 "+p.name+" -impl mp")
		})
	}
}

// mpiReference runs p's binary exe with -impl mp as `mpirun -np 4` on this machine, outside
// the virtual cluster (ranks on one host, over loopback and shared memory), and returns its
// result.
func mpiReference(ctx context.Context, t *testing.T, p program, exe string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, appBound)
	defer cancel()
	args := []string{"-np", "4", "--oversubscribe", "--bind-to", "none"}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	c, err := selfexec.Run(ctx, implArgs("mp", p.args), selfexec.WithProgram(exe), selfexec.WithLauncher("mpirun", args...),
		selfexec.WithoutEnv("IBIS_", "SLURM_", "OMPI_"))
	if err != nil {
		t.Fatalf("mpirun -np 4 %s -impl mp on this machine: %v\n%s", p.name, err, c.Stderr())
	}
	r := p.result(c.Stdout())
	if r == "" {
		t.Fatalf("mpirun -np 4 %s -impl mp on this machine printed no result:\n%s\n%s", p.name, c.Stdout(), c.Stderr())
	}
	return r
}

// mpiBinary builds the module's package pkg with -tags mpi into dir (without the race
// detector, as users build it).
func mpiBinary(ctx context.Context, t *testing.T, dir, pkg string) string {
	t.Helper()
	exe := filepath.Join(dir, path.Base(pkg))
	ctx, cancel := context.WithTimeout(ctx, testbin.BuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "mpi", "-o", exe, pkg)
	cmd.Dir = filepath.Join("..", "..") // the module's root, from test/cluster
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags mpi %s: %v\n%s", pkg, err, out)
	}
	return exe
}
