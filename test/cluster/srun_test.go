package cluster_test

import (
	"context"
	"testing"
)

// sor1024 is the issue's own check: `srun -n 4 ./sor -n 1024` (to convergence, tcp, no
// other setting) prints the same checksum as `sor -np 4 -n 1024`.
var sor1024 = program{name: "sor-1024", pkg: "./apps/sor", args: []string{"-n", "1024", "-q", "-timeout", "3m"}, local: true,
	result: keyed("sor-result ", "procs", "n", "iters", "change", "checksum")}

// TestAppsUnderSrun runs examples/hello, apps/sor, apps/barneshut and apps/fib under srun on
// a virtual cluster of 4 hosts with SLURM, one task per host (`srun -n 4 -N 4 ./prog
// -impl IMPL ...`, no IBIS_* setting: the pool comes from srun's environment, rank 0
// serving its registry), on tcp and nio, and requires the results of the same program and
// parameters run as `-np 4` on 127.0.0.1, bit for bit; then `srun -n 4 ./sor -n 1024` as a
// user types it (the 4 tasks on the first host, SLURM's block distribution) against
// `sor -np 4 -n 1024`. One cluster serves every variant.
func TestAppsUnderSrun(t *testing.T) {
	c := newCluster(t, 4, true)
	ctx, cancel := context.WithTimeout(context.Background(), 2*appBound)
	defer cancel()
	local := startRegistry(ctx, t, nil) // for hello's reference run, which has no -np
	for _, impl := range []string{"tcp", "nio"} {
		for _, p := range programs {
			t.Run(impl+"/"+p.name, func(t *testing.T) {
				exe := binary(t, p.pkg)
				want := referenceRun(t, p, exe, impl, local.addr)
				sameResult(t, srunLauncher{c: c, impl: impl, args: []string{"-N", "4"}}, p, exe, want,
					"srun -N 4 -n 4 "+p.name+" -impl "+impl)
			})
		}
	}
	t.Run("tcp/sor-n1024", func(t *testing.T) {
		exe := binary(t, sor1024.pkg)
		want := referenceRun(t, sor1024, exe, "tcp", local.addr)
		sameResult(t, srunLauncher{c: c}, sor1024, exe, want, "srun -n 4 sor -n 1024")
	})
}
