package cluster_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/impl/nio"
	"github.com/ibisgo/ibis/internal/netns"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/test/conformance"
)

// Environment of the suite's parent process, which this test starts on the first host.
const (
	envConfImpl  = "IBIS_CLUSTER_CONF_IMPL"  // the implementation; set: this process is the parent
	envConfHosts = "IBIS_CLUSTER_CONF_HOSTS" // the children's hosts: "namespace=address,..."
	envConfAddr  = "IBIS_CLUSTER_CONF_ADDR"  // the parent's host address, where the registry listens
)

// confBound ends a hung parent process; no run relies on it.
const confBound = 15 * time.Minute

// TestConformanceAcrossHosts runs the conformance suite with its parent process on one
// virtual host and its children on two others (3 hosts), on tcp and on nio (its default
// flavours), so that every connection of the suite crosses the bridge. The whole suite
// runs: across hosts it takes about as long as on 127.0.0.1, so CI needs no selection of
// cases.
func TestConformanceAcrossHosts(t *testing.T) {
	if impl := os.Getenv(envConfImpl); impl != "" {
		runConformanceParent(t, impl)
		return
	}
	for _, impl := range []string{"tcp", nio.Name} {
		t.Run(impl, func(t *testing.T) {
			nw := newNetwork(t, 3)
			hosts := nw.Hosts()
			var children []string
			for _, h := range hosts[1:] {
				children = append(children, h.Namespace+"="+h.Addr)
			}
			pattern := "^TestConformanceAcrossHosts$"
			ctx, cancel := context.WithTimeout(context.Background(), confBound)
			defer cancel()
			env := []string{envConfImpl + "=" + impl, envConfHosts + "=" + strings.Join(children, ","),
				envConfAddr + "=" + hosts[0].Addr}
			c, err := selfexec.Run(ctx, []string{"-test.run=" + pattern, "-test.v", "-test.count=1"},
				selfexec.WithLauncher(hosts[0].Exec()[0], hosts[0].Exec()[1:]...),
				selfexec.WithoutEnv("IBIS_"), selfexec.WithEnv(env...), selfexec.WithCombinedOutput())
			out := c.Output()
			if err != nil {
				t.Fatalf("the suite's parent on %s: %v\n%s", hosts[0].Addr, err, out)
			}
			var passed []string
			for _, l := range strings.Split(out, "\n") {
				if name, ok := strings.CutPrefix(strings.TrimSpace(l), "--- PASS: TestConformanceAcrossHosts/"); ok {
					passed = append(passed, strings.Fields(name)[0])
				}
			}
			if len(passed) == 0 {
				t.Fatalf("no case ran:\n%s", out)
			}
			t.Logf("%d cases passed across hosts: %s", len(passed), strings.Join(passed, " "))
		})
	}
}

// runConformanceParent is the suite's parent, on the first host: its registry listens on
// that host's address and its children run on the others, in turn.
func runConformanceParent(t *testing.T, impl string) {
	var hosts []*netns.Host
	for _, kv := range strings.Split(os.Getenv(envConfHosts), ",") {
		ns, addr, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("%s=%q: want namespace=address,...", envConfHosts, os.Getenv(envConfHosts))
		}
		hosts = append(hosts, &netns.Host{Namespace: ns, Addr: addr})
	}
	conformance.Run(t, conformance.Options{
		Impl:         impl,
		RegistryHost: os.Getenv(envConfAddr),
		Child: func(i int) []selfexec.Option {
			h := hosts[i%len(hosts)]
			return []selfexec.Option{selfexec.WithLauncher(h.Exec()[0], h.Exec()[1:]...)}
		},
	})
}
