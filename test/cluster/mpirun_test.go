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
	eachAppOnBoth(ctx, t, func(impl string, p program) (launcher, string) {
		return mpirunLauncher{c: c, impl: impl}, "mpirun -np 4 " + p.name + " -impl " + impl
	})
}

// eachAppOnBoth runs every program on tcp and on nio with the launcher that launch
// gives (and the name it gives it for the log), each against the same program and
// parameters run as -np 4 on 127.0.0.1, bit for bit. It returns the local registry the
// reference runs used (hello's has no -np).
func eachAppOnBoth(ctx context.Context, t *testing.T, launch func(impl string, p program) (launcher, string)) *registryServer {
	t.Helper()
	local := startRegistry(ctx, t, nil)
	for _, impl := range []string{"tcp", "nio"} {
		for _, p := range programs {
			t.Run(impl+"/"+p.name, func(t *testing.T) {
				exe := binary(t, p.pkg)
				want := referenceRun(t, p, exe, impl, local.addr)
				l, where := launch(impl, p)
				sameResult(t, l, p, exe, want, where)
			})
		}
	}
	return local
}
