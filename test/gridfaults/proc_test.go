package gridfaults_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/internal/testbin"
	"github.com/ibisgo/ibis/internal/vcluster"
	"github.com/ibisgo/ibis/ipl"
)

// proc is a process on a host of the grid, its standard output read line by line.
type proc struct {
	name  string
	c     *selfexec.Child
	lines chan string  // closed at the end of its output
	seen  []string     // every line read so far
	used  map[int]bool // the lines of seen that next returned
}

// startProc starts program (the test binary itself when "") with args on host h, with
// env added to an environment stripped of IBIS_ variables.
func startProc(t *testing.T, c *vcluster.Cluster, h, name, program string, args []string, env ...string) *proc {
	t.Helper()
	prefix, err := c.Exec(h)
	if err != nil {
		t.Fatal(err)
	}
	opts := []selfexec.Option{selfexec.WithLauncher(prefix[0], prefix[1:]...), selfexec.WithoutEnv("IBIS_", "GRIDFAULTS_"),
		selfexec.WithEnv(env...), selfexec.WithStdoutPipe(), selfexec.WithStdinPipe()}
	if program != "" {
		opts = append(opts, selfexec.WithProgram(program))
	} else {
		args = append([]string{selfexec.NoTests}, args...)
	}
	ch, err := selfexec.Start(context.Background(), args, opts...)
	if err != nil {
		t.Fatalf("starting the %s on %s: %v", name, h, err)
	}
	p := &proc{name: name + " on " + h, c: ch, lines: make(chan string, 4096), used: map[int]bool{}}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(ch.StdoutPipe())
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		ch.Close()
		for range p.lines { // ends: the pipe reaches its end once the process is gone
		}
		if t.Failed() {
			t.Logf("the %s: output %q\nstandard error:\n%s", p.name, p.seen, ch.Stderr())
		}
	})
	return p
}

// startChild starts the test binary in role on host h.
func startChild(t *testing.T, c *vcluster.Cluster, h, role string, env ...string) *proc {
	t.Helper()
	return startProc(t, c, h, role, "", nil, append(env, envRole+"="+role)...)
}

// next returns the rest of the first line the process printed that starts with prefix
// and that no earlier call returned, waiting for it. Lines are matched in the order they
// came, each prefix on its own, so that a test may wait for two lines in either order.
func (p *proc) next(ctx context.Context, prefix string) (string, error) {
	for i, l := range p.seen {
		if rest, found := strings.CutPrefix(l, prefix); found && !p.used[i] {
			p.used[i] = true
			return rest, nil
		}
	}
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				return "", fmt.Errorf("the %s ended (%v) before printing %q; its standard error:\n%s", p.name, p.c.Wait(), prefix, p.c.Stderr())
			}
			p.seen = append(p.seen, l)
			if rest, found := strings.CutPrefix(l, prefix); found {
				p.used[len(p.seen)-1] = true
				return rest, nil
			}
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for %q from the %s: %w", prefix, p.name, ctx.Err())
		}
	}
}

// must is next, failing the test on error.
func (p *proc) must(ctx context.Context, t *testing.T, prefix string) string {
	t.Helper()
	rest, err := p.next(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return rest
}

// say writes a line to the process's standard input.
func (p *proc) say(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.c.StdinPipe(), line+"\n"); err != nil {
		t.Errorf("telling the %s %q: %v", p.name, line, err)
	}
}

// end waits for the process to end within bound and returns its standard error when it
// failed.
func (p *proc) end(t *testing.T, bound time.Duration) {
	t.Helper()
	select {
	case <-p.c.Done():
	case <-time.After(bound):
		t.Fatalf("the %s did not end within %v:\n%s", p.name, bound, p.c.Stderr())
	}
	if err := p.c.Wait(); err != nil {
		t.Errorf("the %s: %v\n%s", p.name, err, p.c.Stderr())
	}
}

// registryProc starts a registry server on host h (heartbeat and death timeout "" for the
// defaults) and returns it with its address.
func registryProc(ctx context.Context, t *testing.T, c *vcluster.Cluster, h, heartbeat, death string, env ...string) (*proc, string) {
	t.Helper()
	env = append(env, envListen+"="+host(t, c, h).Addr+":0")
	if heartbeat != "" {
		env = append(env, envHB+"="+heartbeat, envDeath+"="+death)
	}
	r := startChild(t, c, h, "registry", env...)
	return r, r.must(ctx, t, "addr ")
}

// hubProc starts ibis-hub on host h with more flags and returns it with its address.
func hubProc(ctx context.Context, t *testing.T, c *vcluster.Cluster, h string, flags ...string) (*proc, string) {
	t.Helper()
	args := append([]string{"-listen", host(t, c, h).Addr + ":0"}, flags...)
	p := startProc(t, c, h, "ibis-hub", binary(t, "./cmd/ibis-hub"), args)
	return p, p.must(ctx, t, "ibis-hub listening on ")
}

// pools numbers the pools of the tests, for unique names.
var pools atomic.Int64

// poolEnv is the environment of the members of a new pool of two.
func poolEnv(regAddr, impl string, more ...string) []string {
	pool := fmt.Sprintf("gridfaults-%d-%d", time.Now().UnixNano(), pools.Add(1))
	return append([]string{ipl.EnvRegistry + "=" + regAddr, ipl.EnvPool + "=" + pool, ipl.EnvPoolSize + "=2",
		ipl.EnvImpl + "=" + impl}, more...)
}

// fields parses "k=v k=v ..." into a map.
func fields(s string) map[string]string {
	out := map[string]string{}
	for _, f := range strings.Fields(s) {
		if k, v, ok := strings.Cut(f, "="); ok {
			out[k] = v
		}
	}
	return out
}

// num is the integer field k of s, failing the test when it has none.
func num(t *testing.T, s, k string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(fields(s)[k], 10, 64)
	if err != nil {
		t.Fatalf("no number %s in %q", k, s)
	}
	return v
}

// binaries are the commands the tests run on the grid's hosts, each built once per run.
var binaries = testbin.New("ibis-gridfaults-bin-")

// binary returns the executable of the module's package pkg, building it on first use.
func binary(t *testing.T, pkg string) string { return binaries.Binary(t, pkg) }

// removeBinaries deletes what binary built.
func removeBinaries() error { return binaries.Remove() }

// memberID matches a port identifier's pool, member and published address, which make a
// loss's error hundreds of characters long.
var memberID = regexp.MustCompile(`@gridfaults-\d+-\d+/(\d+)@[0-9.]+:\d+(;hubs=[^;]*;key=[0-9a-f]+(;closed)?)?`)

// brief shortens an error for the test's log: each identifier becomes @member N.
func brief(s string) string { return memberID.ReplaceAllString(s, "@member$1") }
