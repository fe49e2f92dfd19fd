// Package gridfaults_test breaks an emulated grid (internal/vcluster WithSites) under a
// running pool, each fault with real processes in their own network namespaces: a relay
// hub killed mid-transfer, a hub flooded by strangers, a wide-area link down for 10 s and
// for longer than the death timeout, and 5% of a wide-area link's packets lost
// (docs/GRIDS.md, "Faults"). The grid has three sites of two hosts: s1 (h1, h2) open, s2
// (h3, h4) firewalled, s3 (h5, h6) behind NAT; 10 ms each way between sites, 100 Mbit/s per
// site. Building it needs root, ip, tc, iptables and /dev/net/tun; without them the tests
// skip, saying why (or fail where IBIS_VCLUSTER_REQUIRE is set).
package gridfaults_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	_ "github.com/ibisgo/ibis/impl/nio"
	_ "github.com/ibisgo/ibis/impl/tcp"
	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/internal/vcluster"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(envRole); role != "" {
		os.Exit(runChild(role))
	}
	code := m.Run()
	closeGrid()
	if err := removeBinaries(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if code == 0 {
		if err := goleak.Find(leakcheck.Options()...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// The grid's wide area: the delay each way and the rate of each site's link.
const (
	wanDelay = 10 * time.Millisecond
	wanRate  = 100e6
	// caseBound ends a hung case; no case relies on it.
	caseBound = 3 * time.Minute
	// upBound bounds building the grid.
	upBound = 2 * time.Minute
)

// shared is the grid every test uses, built on first use and removed when the tests end;
// each test leaves its wide area as it found it.
var shared struct {
	once sync.Once
	c    *vcluster.Cluster
	err  error
}

// grid returns the shared grid, or skips the test where this machine cannot build one.
func grid(t *testing.T) *vcluster.Cluster {
	t.Helper()
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), upBound)
		defer cancel()
		shared.c, shared.err = vcluster.Up(ctx, vcluster.WithSites(3, 2),
			vcluster.WithWAN(wanDelay, wanRate, 0), vcluster.WithFirewall(2), vcluster.WithNAT(3))
	})
	if errors.Is(shared.err, vcluster.ErrUnavailable) {
		vcluster.SkipOrFail(t, fmt.Sprintf("this test needs a virtual grid (root, ip, tc, iptables, /dev/net/tun): %v", shared.err))
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.c
}

func closeGrid() {
	if shared.c != nil {
		if err := shared.c.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "removing the grid:", err)
		}
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
