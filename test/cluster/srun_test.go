package cluster_test

import (
	"bufio"
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/internal/vcluster"
	"github.com/ibisgo/ibis/ipl"
)

// sor1024 is the issue's own check: `srun -n 4 ./sor -n 1024` (to convergence, tcp, no
// other setting) prints the same checksum as `sor -np 4 -n 1024`.
var sor1024 = program{name: "sor-1024", pkg: "./apps/sor", args: []string{"-n", "1024", "-q", "-timeout", "3m"}, local: true,
	result: keyed("sor-result ", "procs", "impl", "n", "iters", "change", "checksum")}

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
	local := eachAppOnBoth(ctx, t, func(impl string, p program) (launcher, string) {
		return srunLauncher{c: c, impl: impl, args: []string{"-N", "4"}}, "srun -N 4 -n 4 " + p.name + " -impl " + impl
	})
	t.Run("tcp/sor-n1024", func(t *testing.T) {
		exe := binary(t, sor1024.pkg)
		want := referenceRun(t, sor1024, exe, "tcp", local.addr)
		sameResult(t, srunLauncher{c: c}, sor1024, exe, want, "srun -n 4 sor -n 1024")
	})
}

// badBound is how long after its start a pool whose registry cannot be reached must have
// ended, every rank with an error: the join's bound (ipl.DefaultJoinTimeout, 60 s), with
// room for a loaded machine. A bound, not a speed.
const badBound = ipl.DefaultJoinTimeout + 60*time.Second

// TestSrunRegistryFailures starts pools under srun (4 tasks on 4 hosts, sor) whose
// registry cannot be had, as a user may meet it, and requires every rank to end within
// badBound with an error that says what was wrong, and srun to fail:
//
//   - port taken: the port rank 0 must serve the registry on (IBIS_REGISTRY_PORT, as
//     another program could hold the one the job id gives) is held on the first host by a
//     program that accepts connections and says nothing: rank 0 fails at once naming the
//     port and the way out; the others, which reach the squatter, fail their join when it
//     times out;
//   - registry nowhere: IBIS_REGISTRY names a port where nothing listens: no rank serves,
//     and every rank fails its join, naming the address.
func TestSrunRegistryFailures(t *testing.T) {
	c := newCluster(t, 4, true)
	exe := binary(t, "./apps/sor")
	h1, err := c.Host("h1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), badBound+appBound)
	t.Cleanup(cancel) // the cases run in parallel, after this function returned
	port := squat(ctx, t, c, "h1", h1.Addr)
	nowhere := net.JoinHostPort(h1.Addr, "1")
	cases := []struct {
		name  string
		env   []string
		rank0 []string // words of rank 0's error
		other []string // words of every other rank's error
	}{
		{name: "port-taken", env: []string{ipl.EnvRegistryPort + "=" + port},
			rank0: []string{"sor: ", "serving the pool's registry", ipl.EnvRegistryPort, "address already in use"},
			other: []string{"sor: ", "join"}},
		{name: "registry-nowhere", env: []string{ipl.EnvRegistry + "=" + nowhere},
			rank0: []string{"sor: ", nowhere}, other: []string{"sor: ", nowhere}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			ctx, cancel := context.WithTimeout(ctx, badBound)
			defer cancel()
			l := srunLauncher{c: c, args: []string{"-N", "4", "--label"}, env: tc.env}
			j := l.start(ctx, t, exe, 4, "-n", "64", "-iters", "5", "-q")
			err := j.wait(ctx)
			took := time.Since(start).Round(time.Millisecond)
			if err == nil {
				t.Fatalf("srun succeeded:\n%s", j.stdout())
			}
			if ctx.Err() != nil {
				t.Fatalf("not ended within %v: %v", badBound, err)
			}
			out := j.procs[0].c.Stderr()
			for rank := range 4 {
				want := tc.other
				if rank == 0 {
					want = tc.rank0
				}
				if l := labelled(out, rank, want); l == "" {
					t.Errorf("rank %d printed no error with %q:\n%s", rank, want, out)
				} else {
					t.Logf("rank %d: %s", rank, l)
				}
			}
			t.Logf("srun failed after %v", took)
		})
	}
}

// labelled returns the first line of srun --label output from task rank that contains
// all of words, without its label, or "".
func labelled(out string, rank int, words []string) string {
	prefix := strconv.Itoa(rank) + ": "
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimLeft(l, " "), prefix); ok && containsAll(rest, words) {
			return rest
		}
	}
	return ""
}

// squat starts testdata/squat on host at addr and returns the port it holds; the test's
// cleanup stops it.
func squat(ctx context.Context, t *testing.T, c *vcluster.Cluster, host, addr string) string {
	t.Helper()
	prefix, err := c.Exec(host)
	if err != nil {
		t.Fatal(err)
	}
	sq, err := selfexec.Start(ctx, []string{"-host", addr}, selfexec.WithProgram(binary(t, "./test/cluster/testdata/squat")),
		selfexec.WithLauncher(prefix[0], prefix[1:]...), selfexec.WithStdoutPipe())
	if err != nil {
		t.Fatalf("starting the squatter: %v", err)
	}
	t.Cleanup(sq.Close)
	line, err := bufio.NewReader(sq.StdoutPipe()).ReadString('\n')
	hostport, ok := strings.CutPrefix(strings.TrimSpace(line), "squatting on ")
	if err != nil || !ok {
		t.Fatalf("the squatter said %q (%v):\n%s", line, err, sq.Stderr())
	}
	_, port, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Fatal(err)
	}
	return port
}
