package cluster_test

import (
	"context"
	"testing"
)

// TestAppsUnderMPIRun runs examples/hello, apps/sor, apps/barneshut and apps/fib under Open
// MPI's mpirun across a virtual cluster of 4 hosts (`mpirun -np 4 --map-by node ... ./prog
// -impl IMPL ...` on the first host, one rank per host), on tcp and nio, with no IBIS_*
// setting: the pool comes from mpirun's OMPI_* variables, rank 0 (on mpirun's host)
// serving its registry. The results must equal, bit for bit, those of the same program and
// parameters run as `-np 4` on 127.0.0.1. One cluster serves every variant.
func TestAppsUnderMPIRun(t *testing.T) {
	c := newCluster(t, 4, false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*appBound)
	defer cancel()
	local := startRegistry(ctx, t, nil) // for hello's reference run, which has no -np
	for _, impl := range []string{"tcp", "nio"} {
		for _, p := range programs {
			t.Run(impl+"/"+p.name, func(t *testing.T) {
				exe := binary(t, p.pkg)
				want := referenceRun(t, p, exe, impl, local.addr)
				sameResult(t, mpirunLauncher{c: c, impl: impl}, p, exe, want, "mpirun -np 4 "+p.name+" -impl "+impl)
			})
		}
	}
}
