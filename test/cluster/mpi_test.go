//go:build mpi

package cluster_test

import (
	"context"
	"os/exec"
	"path"
	"path/filepath"
	"testing"
)

// TestAppsOverMPIOnCluster runs examples/hello, apps/sor, apps/barneshut and apps/fib built
// with -tags mpi on impl/mp across a virtual cluster of 4 hosts with SLURM, started both
// ways a user starts an MPI program there: `srun --mpi=pmix -N 4 -n 4 ./prog -impl mp ...`
// and `mpirun -np 4 --map-by node ... ./prog -impl mp ...`, with no IBIS_* setting. The
// results must equal, bit for bit, those of the same binary run as `-np 4` on 127.0.0.1
// (tcp). srun gets --kill-on-bad-exit, as MPI jobs usually do, so that a rank that fails
// ends the step instead of leaving the others waiting in MPI. One cluster serves every variant (needs Open MPI's development files to build):
//
//	go test -race -count=1 -tags mpi -run '^TestAppsOverMPIOnCluster$' ./test/cluster/
func TestAppsOverMPIOnCluster(t *testing.T) {
	c := newCluster(t, 4, true)
	ctx, cancel := context.WithTimeout(context.Background(), 2*appBound)
	defer cancel()
	local := startRegistry(ctx, t, nil) // for hello's reference run, which has no -np
	dir := t.TempDir()
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			exe := mpiBinary(ctx, t, dir, p.pkg)
			want := referenceRun(t, p, exe, "tcp", local.addr)
			sameResult(t, srunLauncher{c: c, impl: "mp", args: []string{"--mpi=pmix", "-N", "4", "--kill-on-bad-exit=1"}}, p, exe, want,
				"srun --mpi=pmix -N 4 -n 4 "+p.name+" -impl mp")
			sameResult(t, mpirunLauncher{c: c, impl: "mp"}, p, exe, want, "mpirun -np 4 "+p.name+" -impl mp")
		})
	}
}

// mpiBinary builds the module's package pkg with -tags mpi into dir (without the race
// detector, as users build it).
func mpiBinary(ctx context.Context, t *testing.T, dir, pkg string) string {
	t.Helper()
	exe := filepath.Join(dir, path.Base(pkg))
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "mpi", "-o", exe, pkg)
	cmd.Dir = filepath.Join("..", "..") // the module's root, from test/cluster
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags mpi %s: %v\n%s", pkg, err, out)
	}
	return exe
}
