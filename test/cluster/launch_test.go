package cluster_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/netns"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/ipl"
)

// launcher starts the processes of one pool of a program. envLauncher starts them as
// ibis-run does (a registry server, the pool named by each process's environment); srun
// and mpirun on a virtual cluster are meant to be launchers too, so that the same checks
// run under each.
type launcher interface {
	// start starts np processes of the executable exe with args and returns them running;
	// the test's cleanup ends whatever still runs.
	start(ctx context.Context, t *testing.T, exe string, np int, args ...string) *job
}

// job is the processes of one pool.
type job struct {
	procs []*proc
}

// proc is one process of a job.
type proc struct {
	rank int
	host *netns.Host // nil: this machine's own namespace
	c    *selfexec.Child
}

// wait waits for every process to end (or ctx) and returns the failures, each naming its
// rank, host and standard error.
func (j *job) wait(ctx context.Context) error {
	var errs []error
	for _, p := range j.procs {
		if err := p.wait(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// wait waits for the process to end (or ctx) and returns its failure: its exit status with
// its standard error, or ctx's error when it did not end.
func (p *proc) wait(ctx context.Context) error {
	select {
	case <-p.c.Done():
	case <-ctx.Done():
		return fmt.Errorf("rank %d%s did not end: %w\n%s", p.rank, p.where(), ctx.Err(), p.c.Stderr())
	}
	if err := p.c.Wait(); err != nil {
		return fmt.Errorf("rank %d%s: %w\n%s", p.rank, p.where(), err, p.c.Stderr())
	}
	return nil
}

func (p *proc) where() string {
	if p.host == nil {
		return ""
	}
	return " on " + p.host.Addr
}

// stdout is every process's standard output, in the order of the ranks.
func (j *job) stdout() string {
	var b strings.Builder
	for _, p := range j.procs {
		b.WriteString(p.c.Stdout())
	}
	return b.String()
}

// stderr is every process's standard error, each headed by its rank, for a failure message.
func (j *job) stderr() string {
	var b strings.Builder
	for _, p := range j.procs {
		fmt.Fprintf(&b, "--- rank %d%s:\n%s", p.rank, p.where(), p.c.Stderr())
	}
	return b.String()
}

// envLauncher starts the processes as cmd/ibis-run does: each is given the registry server's
// address, the pool's name and size, its rank and the implementation in its environment.
// Process k runs on hosts[k mod len(hosts)]; with no hosts, all run here on 127.0.0.1.
type envLauncher struct {
	hosts    []*netns.Host
	registry string // the registry server's host:port
	impl     string
	env      []string // more environment for every process
}

// pools numbers the pools the tests make, for unique names.
var pools atomic.Int64

func (l envLauncher) start(ctx context.Context, t *testing.T, exe string, np int, args ...string) *job {
	t.Helper()
	pool := fmt.Sprintf("cluster-%d-%d", time.Now().UnixNano(), pools.Add(1))
	j := &job{}
	for rank := range np {
		env := append([]string{
			ipl.EnvRegistry + "=" + l.registry, ipl.EnvPool + "=" + pool, ipl.EnvPoolSize + "=" + strconv.Itoa(np),
			"IBIS_RANK=" + strconv.Itoa(rank), ipl.EnvImpl + "=" + l.impl,
		}, l.env...)
		opts := []selfexec.Option{selfexec.WithProgram(exe), selfexec.WithoutEnv("IBIS_")}
		var host *netns.Host
		if len(l.hosts) > 0 {
			host = l.hosts[rank%len(l.hosts)]
			opts = append(opts, selfexec.WithLauncher(host.Exec()[0], host.Exec()[1:]...))
		}
		c, err := selfexec.Start(ctx, args, append(opts, selfexec.WithEnv(env...))...)
		if err != nil {
			t.Fatalf("starting rank %d of %s: %v", rank, exe, err)
		}
		t.Cleanup(c.Close)
		j.procs = append(j.procs, &proc{rank: rank, host: host, c: c})
	}
	return j
}

// registryServer is an ibis-registry process.
type registryServer struct {
	addr  string // host:port, as it printed it
	c     *selfexec.Child
	lines chan string // its standard output after the address line; closed at its end
}

// startRegistry runs ibis-registry on host h (nil: here, on 127.0.0.1) on a port the kernel
// picks, with more flags, and returns once it listens. Its standard output stays readable
// line by line (with -events: the pool's joins, leaves and deaths).
func startRegistry(ctx context.Context, t *testing.T, h *netns.Host, flags ...string) *registryServer {
	t.Helper()
	addr := "127.0.0.1"
	opts := []selfexec.Option{selfexec.WithProgram(binary(t, "./cmd/ibis-registry")), selfexec.WithoutEnv("IBIS_"),
		selfexec.WithStdoutPipe()}
	if h != nil {
		addr = h.Addr
		opts = append(opts, selfexec.WithLauncher(h.Exec()[0], h.Exec()[1:]...))
	}
	c, err := selfexec.Start(context.Background(), append([]string{"-host", addr, "-port", "0"}, flags...), opts...)
	if err != nil {
		t.Fatalf("starting ibis-registry: %v", err)
	}
	r := &registryServer{c: c, lines: make(chan string, 4096)}
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(c.StdoutPipe())
		for sc.Scan() {
			r.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		c.Close()
		for range r.lines { // ends: the pipe reaches its end once the server is gone
		}
	})
	for r.addr == "" {
		select {
		case l, ok := <-r.lines:
			if !ok {
				t.Fatalf("ibis-registry ended (%v) before it listened:\n%s", c.Wait(), c.Stderr())
			}
			if a, found := strings.CutPrefix(l, "ibis-registry listening on "); found {
				r.addr = a
			}
		case <-ctx.Done():
			t.Fatalf("ibis-registry did not say where it listens: %v\n%s", ctx.Err(), c.Stderr())
		}
	}
	return r
}

// waitLine waits for an output line of the registry that contains all of the words, in
// any case.
func (r *registryServer) waitLine(ctx context.Context, words ...string) (string, error) {
	for {
		select {
		case l, ok := <-r.lines:
			if !ok {
				return "", fmt.Errorf("ibis-registry ended (%v) before printing a line with %q", r.c.Wait(), words)
			}
			if containsAll(l, words) {
				return l, nil
			}
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for a registry line with %q: %w", words, ctx.Err())
		}
	}
}

func containsAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(strings.ToLower(s), strings.ToLower(w)) {
			return false
		}
	}
	return true
}

// resultLine returns the line of out that starts with prefix, or "" when there is none.
func resultLine(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// fields parses "k=v k=v ..." and keeps the keys named.
func fields(line string, keys ...string) map[string]string {
	out := map[string]string{}
	for _, f := range strings.Fields(line) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		for _, want := range keys {
			if k == want {
				out[k] = v
			}
		}
	}
	return out
}
