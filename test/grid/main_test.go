// Package grid_test runs pools across a virtual grid (internal/vcluster WithSites): three
// sites of two hosts joined by a router whose link emulator delays the packets between
// sites, site 2 behind a firewall (no connection from another site reaches it) and site 3
// behind NAT (its hosts share one masquerading address). An ibis-registry and an ibis-hub
// run on the first host of site 1, and every process is told the hub (IBIS_HUB), so that a
// connection that cannot be dialled directly is set up in reverse or relayed.
//
// It runs the conformance suite's connection cases and examples/hello across the sites,
// on tcp and nio, and checks that each connection took the route the sites allow: direct
// within a site and out of a closed one, reversed from the open site into a closed one,
// relayed between the two closed sites, also with TLS (tcp) and a pool secret. Everything needs
// root, ip, iptables and a TUN device; without them the tests skip, saying why (or fail
// where vcluster.EnvRequire is set, as in CI).
package grid_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	_ "github.com/ibisgo/ibis/impl/nio"
	_ "github.com/ibisgo/ibis/impl/tcp"
	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/test/conformance"
)

func TestMain(m *testing.M) {
	if conformance.IsChild() {
		os.Exit(conformance.RunChild())
	}
	if role := os.Getenv(envRole); role != "" {
		os.Exit(runRole(role))
	}
	code := m.Run()
	if err := removeBinaries(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if code == 0 {
		// Every goroutine of the tests (output readers, child waiters) must have ended.
		if err := goleak.Find(leakcheck.Options()...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
