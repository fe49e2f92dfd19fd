package launchenv_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	_ "github.com/ibisgo/ibis/impl/nio"
	_ "github.com/ibisgo/ibis/impl/tcp"
	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/internal/vcluster"
	"github.com/ibisgo/ibis/ipl"
)

// envMember makes the test binary play a pool member started by a launcher; its value
// is the implementation.
const envMember = "LAUNCHENV_TEST_MEMBER"

// launcherPrefixes are the variables a child must not inherit from the test's own
// environment (CI may run the tests under a launcher).
var launcherPrefixes = []string{"IBIS_", "SLURM_", "SLURMD_", "OMPI_", "PMIX_", "PMI_"}

func TestMain(m *testing.M) {
	if impl := os.Getenv(envMember); impl == "alone" {
		os.Exit(alone())
	} else if impl != "" {
		os.Exit(member(impl))
	}
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}

// member joins the pool its launcher's environment describes, with no IBIS_* setting,
// and prints what it sees. Rank 0 closes first; the others then check that its registry
// still serves them (it must outlive rank 0's Close until they have left).
func member(impl string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fail := func(err error) int {
		fmt.Printf("member rank=%d error=%q\n", ipl.LaunchRank(), err.Error())
		return 1
	}
	rank := ipl.LaunchRank()
	ib, err := ipl.New(ctx, ipl.WithImplementation(impl), ipl.WithTag("rank-"+strconv.Itoa(rank)))
	if err != nil {
		return fail(err)
	}
	reg := ib.Registry()
	if err := reg.WaitUntilPoolClosed(ctx); err != nil {
		return fail(errors.Join(err, ib.Close()))
	}
	members := len(reg.Members())
	if rank != 0 {
		members = reg.PoolSize() // rank 0 may have left already
	}
	fmt.Printf("member rank=%d size=%d launchsize=%d pool=%s members=%d\n", rank, reg.PoolSize(), ipl.LaunchSize(),
		ib.Identifier().Pool, members)
	if rank == 0 {
		if err := ib.Close(); err != nil {
			return fail(err)
		}
		return 0
	}
	zero := ""
	for ev := range reg.Events() { // until rank 0 has left
		if ev.Type == ipl.EventJoined && ev.Member.Tag == "rank-0" {
			zero = ev.Member.ID
		}
		if ev.Type == ipl.EventLeft && ev.Member.ID == zero {
			break
		}
	}
	if _, err := reg.Sequence(ctx, "after-rank0"); err != nil {
		return fail(errors.Join(fmt.Errorf("the registry after rank 0 left: %w", err), ib.Close()))
	}
	fmt.Printf("member rank=%d after=ok\n", rank)
	if err := ib.Close(); err != nil {
		return fail(err)
	}
	return 0
}

// alone makes an Ibis on tcp and prints its pool's size and members: a program run
// directly in a batch script must get a pool of its own.
func alone() int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ib, err := ipl.New(ctx, ipl.WithImplementation("tcp"))
	if err != nil {
		fmt.Printf("alone error=%q\n", err.Error())
		return 1
	}
	fmt.Printf("alone size=%d members=%d\n", ib.Registry().PoolSize(), len(ib.Registry().Members()))
	if err := ib.Close(); err != nil {
		fmt.Printf("alone error=%q\n", err.Error())
		return 1
	}
	return 0
}

// freePort returns a port the kernel had free, for IBIS_REGISTRY_PORT.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// runMembers starts n members with the environment env(rank, port), port being a free
// port for rank 0's registry, and checks that they form one pool of n with ranks 0..n-1
// and that rank 0's registry outlived its Close. The port is free when picked but
// another process may take it before rank 0 listens (an outgoing connection of a test
// running beside this one); then the others are stopped and the run is made again with
// another port, at most three times.
func runMembers(t *testing.T, impl string, n int, env func(rank int, port string) []string) {
	for attempt := 1; ; attempt++ {
		port := freePort(t)
		out, taken := startMembers(t, impl, n, func(r int) []string { return env(r, port) }, attempt < 3)
		if taken {
			t.Logf("port %s was taken before rank 0 listened on it; again with another", port)
			continue
		}
		checkPool(t, out, n)
		return
	}
}

// startMembers runs one attempt of runMembers and returns the members' output. With
// mayRetry, a rank 0 that could not listen on its port ends the attempt at once and
// startMembers reports it (taken) instead of failing the test.
func startMembers(t *testing.T, impl string, n int, env func(rank int) []string, mayRetry bool) (out string, taken bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	children := make([]*selfexec.Child, n)
	for r := range n {
		c, err := selfexec.Start(ctx, []string{selfexec.NoTests}, selfexec.WithoutEnv(launcherPrefixes...),
			selfexec.WithEnv(append(env(r), envMember+"="+impl)...), selfexec.WithCombinedOutput())
		if err != nil {
			t.Fatal(err)
		}
		children[r] = c
	}
	errs := make([]error, n)
	errs[0] = children[0].Wait()
	if errs[0] != nil && mayRetry && strings.Contains(children[0].Output(), "address already in use") {
		cancel()
		for _, c := range children[1:] {
			_ = c.Wait()
		}
		return "", true
	}
	var b strings.Builder
	for r, c := range children {
		if r > 0 {
			errs[r] = c.Wait()
		}
		if errs[r] != nil {
			t.Errorf("rank %d: %v\n%s", r, errs[r], c.Output())
		}
		b.WriteString(c.Output())
	}
	return b.String(), false
}

// checkPool checks the members' lines: one pool, n members, ranks 0..n-1, and every
// other rank served after rank 0 closed.
func checkPool(t *testing.T, out string, n int) {
	t.Helper()
	var ranks []int
	pools, after := map[string]bool{}, 0
	for line := range strings.Lines(out) {
		f := map[string]string{}
		if !strings.HasPrefix(line, "member ") {
			continue
		}
		for kv := range strings.FieldsSeq(line[len("member "):]) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		switch {
		case f["error"] != "":
			t.Errorf("rank %s failed: %s", f["rank"], f["error"])
		case f["after"] == "ok":
			after++
		default:
			r, _ := strconv.Atoi(f["rank"])
			ranks = append(ranks, r)
			pools[f["pool"]] = true
			want := strconv.Itoa(n)
			if f["size"] != want || f["members"] != want || f["launchsize"] != want {
				t.Errorf("rank %d sees size %s, %s members, launch size %s; want %d", r, f["size"], f["members"], f["launchsize"], n)
			}
		}
	}
	slices.Sort(ranks)
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(ranks, want) || len(pools) != 1 || after != n-1 {
		t.Errorf("ranks %v (want %v), pools %v, %d served after rank 0 closed (want %d); output:\n%s",
			ranks, want, pools, after, n-1, out)
	}
}

// Processes given the variables a real srun sets form one pool on every implementation.
func TestSrunEnvironmentFormsOnePool(t *testing.T) {
	for _, impl := range []string{"tcp", "nio"} {
		t.Run(impl, func(t *testing.T) {
			const n = 4
			runMembers(t, impl, n, func(r int, port string) []string {
				return []string{"SLURM_PROCID=" + strconv.Itoa(r), "SLURM_NTASKS=" + strconv.Itoa(n), "SLURM_JOB_ID=4711",
					"SLURM_STEP_ID=0", "SLURM_STEP_NODELIST=localhost", "SLURM_JOB_NODELIST=localhost",
					"SLURMD_NODENAME=localhost", "IBIS_REGISTRY_PORT=" + port}
			})
		})
	}
}

// Processes given the variables Open MPI's mpirun sets form one pool on tcp and nio.
func TestMpirunEnvironmentFormsOnePool(t *testing.T) {
	for _, impl := range []string{"tcp", "nio"} {
		t.Run(impl, func(t *testing.T) {
			const n = 3
			const hnp = "98765.0;tcp://127.0.0.1:1"
			runMembers(t, impl, n, func(r int, port string) []string {
				return []string{"OMPI_COMM_WORLD_RANK=" + strconv.Itoa(r), "OMPI_COMM_WORLD_SIZE=" + strconv.Itoa(n),
					"OMPI_MCA_ess_base_jobid=98766", "OMPI_MCA_orte_hnp_uri=" + hnp, "OMPI_MCA_orte_local_daemon_uri=" + hnp,
					"IBIS_REGISTRY_PORT=" + port}
			})
		})
	}
}

// A real mpirun of tcp and nio processes forms one pool, rank 0 on mpirun's host.
func TestRealMpirunFormsOnePool(t *testing.T) {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		vcluster.SkipOrFail(t, fmt.Sprint("mpirun not installed (Open MPI): ", err))
	}
	for _, impl := range []string{"tcp", "nio"} {
		t.Run(impl, func(t *testing.T) {
			const n = 3
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			args := []string{"-np", strconv.Itoa(n), "--oversubscribe", "--bind-to", "none"}
			if os.Geteuid() == 0 {
				args = append(args, "--allow-run-as-root")
			}
			c, err := selfexec.Run(ctx, []string{selfexec.NoTests}, selfexec.WithLauncher(mpirun, args...),
				selfexec.WithoutEnv(launcherPrefixes...), selfexec.WithEnv(envMember+"="+impl), selfexec.WithCombinedOutput())
			if err != nil {
				t.Fatalf("mpirun: %v\n%s", err, c.Output())
			}
			checkPool(t, c.Output(), n)
		})
	}
}

// The bad cases fail at once with what to do, or fall back as documented; none hangs.
func TestLaunchEnvironmentBadCases(t *testing.T) {
	for _, k := range []string{"IBIS_REGISTRY", "IBIS_POOL", "IBIS_POOL_SIZE", "IBIS_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"} {
		t.Setenv(k, "")
		_ = os.Unsetenv(k)
	}
	srun := func(t *testing.T, extra ...string) {
		for _, kv := range append([]string{"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_JOB_ID=4711", "SLURM_STEP_ID=0",
			"SLURM_STEP_NODELIST=node[1-2]", "SLURMD_NODENAME=node1", "IBIS_REGISTRY_PORT=" + freePort(t)}, extra...) {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range []struct {
		name  string
		extra []string
		says  string
	}{
		{"rank 0 not on the first node", []string{"SLURMD_NODENAME=node2"}, "IBIS_REGISTRY"},
		{"malformed hostlist", []string{"SLURM_STEP_NODELIST=node[1-2"}, "never closed"},
		{"ntasks not a number", []string{"SLURM_NTASKS=two"}, `SLURM_NTASKS="two"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			srun(t, c.extra...)
			ib, err := ipl.New(ctx, ipl.WithImplementation("tcp"))
			if err == nil {
				_ = ib.Close()
			}
			if !errors.Is(err, ipl.ErrInvalidArgument) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("%v; want ErrInvalidArgument saying %q", err, c.says)
			}
		})
	}
	t.Run("batch script runs alone", func(t *testing.T) {
		srun(t, "SLURM_NTASKS=16")
		_ = os.Unsetenv("SLURM_STEP_ID")
		ib, err := ipl.New(ctx, ipl.WithImplementation("tcp"))
		if err != nil {
			t.Fatal(err)
		}
		if ib.Registry().PoolSize() != 0 || len(ib.Registry().Members()) != 1 {
			t.Errorf("batch script: pool size %d, %d members; want an open pool of itself", ib.Registry().PoolSize(), len(ib.Registry().Members()))
		}
		if err := ib.Close(); err != nil {
			t.Error(err)
		}
	})
	t.Run("rank 1 without a registry gives up at the join deadline", func(t *testing.T) {
		srun(t, "SLURM_PROCID=1", "SLURM_STEP_NODELIST=localhost")
		jctx, jcancel := context.WithTimeout(ctx, 2*time.Second)
		defer jcancel()
		ib, err := ipl.New(jctx, ipl.WithImplementation("tcp"))
		if err == nil {
			_ = ib.Close()
			t.Fatal("joined a pool whose registry nobody serves")
		}
		if !errors.Is(err, ipl.ErrRegistryLost) && !errors.Is(err, ipl.ErrTimeout) {
			t.Errorf("%v; want ErrRegistryLost or ErrTimeout", err)
		}
	})
}
