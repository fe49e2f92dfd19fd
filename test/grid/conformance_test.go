package grid_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/test/conformance"
)

// Environment of the suite's parent process, which the test starts on a host of site 1.
const (
	envConfImpl   = "IBIS_GRID_CONF_IMPL"   // the implementation; set: this process is the parent
	envConfLaunch = "IBIS_GRID_CONF_LAUNCH" // the children's launchers: a JSON list of command prefixes
	envConfAddr   = "IBIS_GRID_CONF_ADDR"   // the parent's host address, where the case's registry listens
)

// connectionCases are the suite's cases that make connections between the parent and the
// children in the ways a program does (one-to-one, many-to-one, multicast, a Connect that
// waits for its port, the connection rules); the fault cases (killed or stalled members)
// are test/cluster's.
var connectionCases = []string{"connect-late-receiver", "connect-rules", "direct-port", "manytoone-fifo", "multicast", "roundtrip"}

// Where the suite runs: its parent (and the case's registry) in the open site, its children
// in the firewalled and NATed sites in turn, so that the parent's connections to a child
// are reversed, a child's to the parent direct, and connections between children of the
// two closed sites relayed.
var (
	confParent   = "h2"
	confChildren = []string{"h3", "h5", "h4", "h6"}
)

// confBound ends a hung parent process; no run relies on it.
const confBound = 10 * time.Minute

// testConformance runs the connection cases across the grid on impl, every process
// given the hub.
func testConformance(t *testing.T, g *grid, impl string) {
	var launch [][]string
	for _, h := range confChildren {
		prefix, err := g.c.Exec(h)
		if err != nil {
			t.Fatal(err)
		}
		launch = append(launch, prefix)
	}
	lj, err := json.Marshal(launch)
	if err != nil {
		t.Fatal(err)
	}
	pattern := "^TestGrid$/^(" + strings.Join(connectionCases, "|") + ")$"
	ctx, cancel := context.WithTimeout(context.Background(), confBound)
	defer cancel()
	env := []string{envConfImpl + "=" + impl, envConfLaunch + "=" + string(lj),
		envConfAddr + "=" + host(t, g.c, confParent).Addr, ipl.EnvHub + "=" + g.hub}
	c, err := selfexec.Run(ctx, []string{"-test.run=" + pattern, "-test.v", "-test.count=1"},
		on(t, g.c, confParent), selfexec.WithoutEnv("IBIS_"), selfexec.WithEnv(env...), selfexec.WithCombinedOutput())
	out := c.Output()
	if err != nil {
		t.Fatalf("the suite's parent on %s: %v\n%s", confParent, err, out)
	}
	var passed []string
	for _, l := range strings.Split(out, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(l), "--- PASS: TestGrid/"); ok {
			passed = append(passed, strings.Fields(name)[0])
		}
	}
	slices.Sort(passed)
	if !slices.Equal(passed, connectionCases) {
		t.Fatalf("cases passed: %v; want %v\n%s", passed, connectionCases, out)
	}
	t.Logf("%d cases passed across the sites: %s", len(passed), strings.Join(passed, " "))
}

// runConformanceParent is the suite's parent, on a host of site 1: its registry listens on
// that host's address and its children run on the hosts of the closed sites, in turn.
func runConformanceParent(t *testing.T, impl string) {
	var launch [][]string
	if err := json.Unmarshal([]byte(os.Getenv(envConfLaunch)), &launch); err != nil || len(launch) == 0 {
		t.Fatalf("%s=%q: want a JSON list of command prefixes (%v)", envConfLaunch, os.Getenv(envConfLaunch), err)
	}
	conformance.Run(t, conformance.Options{
		Impl:         impl,
		RegistryHost: os.Getenv(envConfAddr),
		Child: func(i int) []selfexec.Option {
			l := launch[i%len(launch)]
			return []selfexec.Option{selfexec.WithLauncher(l[0], l[1:]...)}
		},
	})
}
