package cluster_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/selfexec"
)

// appBound ends a hung run of a program; no run relies on it.
const appBound = 3 * time.Minute

// program is an application run across hosts and on 127.0.0.1 with the same parameters,
// and what of its output must be the same, bit for bit.
type program struct {
	name, pkg string
	args      []string
	// local says whether the program has -np (its reference run is then `-np 4` here;
	// else the same environment launch on 127.0.0.1).
	local bool
	// result extracts what must be identical from the pool's standard output ("" when
	// it is missing).
	result func(stdout string) string
}

var programs = []program{
	{name: "hello", pkg: "./examples/hello", args: []string{"-n", "3", "-timeout", "2m"}, result: helloResult},
	{name: "sor", pkg: "./apps/sor", args: []string{"-n", "200", "-iters", "60", "-q", "-timeout", "2m"}, local: true,
		result: keyed("sor-result ", "procs", "impl", "n", "iters", "change", "checksum")},
	{name: "barneshut", pkg: "./apps/barneshut", args: []string{"-bodies", "2000", "-steps", "3", "-q", "-timeout", "2m"},
		local: true, result: keyed("barneshut-result ", "bodies", "procs", "impl", "steps", "drift", "checksum")},
	{name: "fib", pkg: "./apps/fib", args: []string{"-n", "27", "-threshold", "15", "-progress", "0", "-timeout", "2m"},
		local: true, result: fibResult},
}

// fibResult is fib's checked result, without the timing that follows it.
func fibResult(out string) string {
	l := resultLine(out, "fib(")
	if i := strings.Index(l, " (checked)"); i >= 0 {
		return l[:i+len(" (checked)")]
	}
	return ""
}

// keyed is the named fields of the line that starts with prefix, in the order named (the
// timings on the line differ from run to run).
func keyed(prefix string, keys ...string) func(string) string {
	return func(out string) string {
		l := resultLine(out, prefix)
		if l == "" {
			return ""
		}
		f := fields(l, keys...)
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+"="+f[k])
		}
		return strings.Join(parts, " ")
	}
}

var helloReply = regexp.MustCompile(`^client \(member \d+\): reply \d+: sum ([0-9.]+) \(want ([0-9.]+)\)$`)

// helloResult is what examples/hello's run must show whichever member wins the election
// (the member numbers, and so the sums, follow the order of the joins): how many replies
// came, that each had the sum it wanted, and the server's last line.
func helloResult(out string) string {
	replies, wrong := 0, 0
	served := ""
	for _, l := range strings.Split(out, "\n") {
		if m := helloReply.FindStringSubmatch(l); m != nil {
			replies++
			if m[1] != m[2] {
				wrong++
			}
		}
		if strings.HasPrefix(l, "server: served ") {
			served = l
		}
	}
	if served == "" {
		return ""
	}
	return fmt.Sprintf("%d replies, %d wrong; %s", replies, wrong, served)
}

// TestAppsAcrossHosts runs examples/hello, apps/sor, apps/barneshut and apps/fib as 4
// processes on 4 virtual hosts, started as ibis-run starts them (ibis-registry on the first
// host), on tcp and on nio, and requires the same results, bit for bit, as 4 processes on
// 127.0.0.1 (`-np 4`).
func TestAppsAcrossHosts(t *testing.T) {
	nw := newNetwork(t, 4)
	hosts := nw.Hosts()
	ctx, cancel := context.WithTimeout(context.Background(), 2*appBound)
	defer cancel()
	reg := startRegistry(ctx, t, hosts[0])
	local := startRegistry(ctx, t, nil)
	for _, impl := range []string{"tcp", "nio"} {
		for _, p := range programs {
			t.Run(impl+"/"+p.name, func(t *testing.T) {
				exe := binary(t, p.pkg)
				want := referenceRun(t, p, exe, impl, local.addr)
				l := envLauncher{hosts: hosts, registry: reg.addr, impl: impl}
				got := runResult(t, l, p, exe)
				if got != want {
					t.Errorf("across 4 hosts: %q\non 127.0.0.1:     %q", got, want)
				}
				t.Logf("%s", got)
			})
		}
	}
}

// referenceRun returns the result of p with 4 processes on 127.0.0.1, run once per
// binary, implementation and arguments.
func referenceRun(t *testing.T, p program, exe, impl, localRegistry string) string {
	t.Helper()
	key := strings.Join(append([]string{exe, impl}, p.args...), "\x00")
	if r, ok := references.Load(key); ok {
		return r.(string)
	}
	r := runReference(t, p, exe, impl, localRegistry)
	references.Store(key, r)
	return r
}

// references holds the loopback results already computed, by binary, implementation
// and arguments: the tests across hosts, under srun and under mpirun compare with the
// same runs, which need not be repeated.
var references sync.Map

func runReference(t *testing.T, p program, exe, impl, localRegistry string) string {
	t.Helper()
	if !p.local {
		return runResult(t, envLauncher{registry: localRegistry, impl: impl}, p, exe)
	}
	ctx, cancel := context.WithTimeout(context.Background(), appBound)
	defer cancel()
	c, err := selfexec.Run(ctx, append([]string{"-np", "4"}, p.args...), selfexec.WithProgram(exe),
		selfexec.WithoutEnv("IBIS_"), selfexec.WithEnv("IBIS_IMPL="+impl))
	if err != nil {
		t.Fatalf("%s -np 4 on 127.0.0.1: %v\n%s", p.name, err, c.Stderr())
	}
	r := p.result(c.Stdout())
	if r == "" {
		t.Fatalf("%s -np 4 on 127.0.0.1 printed no result:\n%s", p.name, c.Stdout())
	}
	return r
}

// runResult runs p with 4 processes started by l and returns its result. A launcher that
// is a restarter may have a failed job started again, at most twice.
func runResult(t *testing.T, l launcher, p program, exe string) string {
	t.Helper()
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), appBound)
		j := l.start(ctx, t, exe, 4, p.args...)
		err := j.wait(ctx)
		cancel()
		if err != nil {
			if r, ok := l.(restarter); ok && attempt < 3 && r.restart(err) {
				t.Logf("%s: attempt %d failed as %s; starting it again:\n%v", p.name, attempt, r.why(), err)
				continue
			}
			t.Fatalf("%s: %v", p.name, err)
		}
		r := p.result(j.stdout())
		if r == "" {
			t.Fatalf("%s printed no result:\n%s\n%s", p.name, j.stdout(), j.stderr())
		}
		return r
	}
}

// restarter is a launcher whose jobs may fail for a known reason outside Ibis, in which
// case the job is started again.
type restarter interface {
	// restart reports whether err, a failed job's error, is that known failure.
	restart(err error) bool
	// why names the failure for the log.
	why() string
}
