package grid_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/impl/nio"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/internal/vcluster"
)

// The grid every test builds: 3 sites of 2 hosts (h1 h2 | h3 h4 | h5 h6), site 2
// firewalled, site 3 behind NAT, a small wide-area delay so that the runs stay short.
const (
	sites        = 3
	hostsPerSite = 2
	firewallSite = 2
	natSite      = 3
	wanDelay     = 2 * time.Millisecond
	// upBound bounds building the grid and starting its servers; it takes seconds.
	upBound = 2 * time.Minute
)

// grid is a virtual grid with an ibis-registry and an ibis-hub on h1 (site 1, open).
type grid struct {
	c        *vcluster.Cluster
	registry string // the registry's host:port
	hub      string // the hub's host:port, what every process gets as IBIS_HUB
}

// newGrid builds the grid and starts its registry and hub, all removed by the test's
// cleanup, or skips the test (fails it under vcluster.EnvRequire) where this machine
// cannot build one, saying why.
func newGrid(t *testing.T) *grid {
	t.Helper()
	if err := vcluster.Unavailable(vcluster.NeedTUN, vcluster.NeedIPTables); err != nil {
		vcluster.SkipOrFail(t, err)
	}
	// Built before the grid, so that a slow cold build does not count against upBound.
	registryExe, hubExe := binary(t, "./cmd/ibis-registry"), binary(t, "./cmd/ibis-hub")
	ctx, cancel := context.WithTimeout(context.Background(), upBound)
	defer cancel()
	start := time.Now()
	c, err := vcluster.Up(ctx, vcluster.WithSites(sites, hostsPerSite), vcluster.WithWAN(wanDelay, 0, 0),
		vcluster.WithFirewall(firewallSite), vcluster.WithNAT(natSite))
	if errors.Is(err, vcluster.ErrUnavailable) {
		vcluster.SkipOrFail(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("removing the virtual grid: %v", err)
		}
	})
	checkLayout(t, c)
	t.Logf("virtual grid %s up in %v", c.ID(), time.Since(start).Round(time.Millisecond))
	h1 := host(t, c, "h1")
	g := &grid{c: c}
	g.registry = startServer(ctx, t, c, "h1", registryExe, "ibis-registry listening on ", nil, "-host", h1.Addr, "-port", "0")
	g.hub = startServer(ctx, t, c, "h1", hubExe, "ibis-hub listening on ", nil, "-listen", h1.Addr+":0")
	return g
}

// checkLayout fails the test unless the grid's sites are as the tests assume.
func checkLayout(t *testing.T, c *vcluster.Cluster) {
	t.Helper()
	s := c.Sites()
	ok := len(s) == sites && !s[0].Firewall && !s[0].NAT && s[firewallSite-1].Firewall && s[natSite-1].NAT
	for k := 0; ok && k < sites; k++ {
		ok = strings.Join(s[k].Hosts, ",") == fmt.Sprintf("h%d,h%d", 2*k+1, 2*k+2)
	}
	if !ok {
		t.Fatalf("the grid's sites are %+v; want h1,h2 open, h3,h4 firewalled, h5,h6 behind NAT", s)
	}
}

// host returns the grid's host called name.
func host(t *testing.T, c *vcluster.Cluster, name string) vcluster.Host {
	t.Helper()
	h, err := c.Host(name)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// siteOf is the site of host name (h1 .. h6).
func siteOf(t *testing.T, c *vcluster.Cluster, name string) int {
	t.Helper()
	return host(t, c, name).Site
}

// on returns the start option that runs a process on host name of c.
func on(t *testing.T, c *vcluster.Cluster, name string) selfexec.Option {
	t.Helper()
	prefix, err := c.Exec(name)
	if err != nil {
		t.Fatal(err)
	}
	return selfexec.WithLauncher(prefix[0], prefix[1:]...)
}

// startServer runs the server program exe with args on host name, without the test's
// IBIS_* variables but with env, and returns the address it printed on the line that
// starts with listening. Its output after that line is read and dropped; the test's
// cleanup stops it.
func startServer(ctx context.Context, t *testing.T, c *vcluster.Cluster, name, exe, listening string, env []string, args ...string) string {
	t.Helper()
	sc, err := selfexec.Start(context.Background(), args, selfexec.WithProgram(exe), selfexec.WithoutEnv("IBIS_"),
		selfexec.WithEnv(env...), selfexec.WithStdoutPipe(), on(t, c, name))
	if err != nil {
		t.Fatalf("starting %s on %s: %v", exe, name, err)
	}
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		s := bufio.NewScanner(sc.StdoutPipe())
		for s.Scan() {
			select {
			case lines <- s.Text():
			default: // nobody reads any more: dropped
			}
		}
	}()
	t.Cleanup(func() {
		sc.Close()
		for range lines { // ends: the pipe reaches its end once the server is gone
		}
	})
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("%s on %s ended (%v) before it listened:\n%s", exe, name, sc.Wait(), sc.Stderr())
			}
			if a, found := strings.CutPrefix(l, listening); found {
				t.Logf("%s on %s", l, name)
				return a
			}
		case <-ctx.Done():
			t.Fatalf("%s on %s did not say where it listens: %v\n%s", exe, name, ctx.Err(), sc.Stderr())
		}
	}
}

// TestGrid builds the grid once and runs on it, on tcp and nio: the route checker
// (routes; with TLS and a pool secret on tcp, as nio has no TLS), examples/hello, and
// the conformance suite's connection cases. Started by itself as the suite's parent (envConfImpl set), it plays
// that part instead.
func TestGrid(t *testing.T) {
	if impl := os.Getenv(envConfImpl); impl != "" {
		runConformanceParent(t, impl)
		return
	}
	g := newGrid(t)
	for _, impl := range impls {
		t.Run("routes/"+impl, func(t *testing.T) { testRoutes(t, g, impl, g.registry, g.hub) })
	}
	// nio speaks no TLS on its data connections (ErrUnsupported): tcp only.
	t.Run("routes-tls/tcp", func(t *testing.T) { testRoutesTLS(t, g, "tcp") })
	for _, impl := range impls {
		t.Run("hello/"+impl, func(t *testing.T) { testHello(t, g, impl) })
	}
	for _, impl := range impls {
		t.Run("conformance/"+impl, func(t *testing.T) { testConformance(t, g, impl) })
	}
}

// impls are the implementations the grid tests run on.
var impls = []string{"tcp", nio.Name}
