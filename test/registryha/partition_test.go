//go:build linux

package registryha

import (
	"context"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/etcdtest"
	"github.com/ibisgo/ibis/registry"
)

// cutJoinWait is how long a newcomer tries to join the cut-off front end alone; it
// must not get in, however long it tries.
const cutJoinWait = 3 * time.Second

// Front end A reaches etcd through proxies that then cut every link (a partition:
// nothing is forwarded, nothing closed). A stops serving instead of serving stale
// state: its members move to B (RegistryLost, then RegistryRestored), nobody is
// declared dead, also once A's lease has ended, and a newcomer at A alone does not
// get in. Healed, A serves again: a newcomer joins there.
func TestPartitionedFrontEnd(t *testing.T) {
	needHA(t)
	cluster := etcdtest.StartCluster(t, 3)
	eps := cluster.Endpoints()
	proxies, viaProxies := etcdtest.NewProxies(t, eps)
	a := startFrontEnd(t, "A", viaProxies, shortTimeouts...)
	b := startFrontEnd(t, "B", eps, shortTimeouts...)
	w := newWorld(t, a, b)
	ctx, cancel := context.WithTimeout(context.Background(), 4*testTimeout)
	defer cancel()

	ms, err := w.joinAll(ctx, "m", 16)
	if err != nil {
		t.Fatal(err)
	}
	if err := work(ctx, ms, 0, false); err != nil {
		t.Fatal(err)
	}
	onA := at(ms, a.addr)
	if len(onA) == 0 || len(onA) == len(ms) {
		t.Fatalf("%d of %d members joined at A: Join should spread them over both front ends", len(onA), len(ms))
	}

	for _, p := range proxies {
		p.Cut()
	}
	cut := time.Now()
	busy := make(chan error, 1)
	go func() { busy <- work(ctx, ms, 1, false) }()
	for _, m := range onA {
		if err := m.waitMoved(1); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-busy; err != nil {
		t.Fatal(err)
	}
	t.Logf("A's %d members moved to B %v after the cut", len(onA), time.Since(cut).Round(time.Millisecond))

	jctx, jcancel := context.WithTimeout(ctx, cutJoinWait)
	c, err := registry.Join(jctx, a.addr, poolName, registry.WithTag("cut"))
	jcancel()
	if err == nil {
		t.Errorf("a newcomer joined the front end cut off from etcd as %s", c.Identity())
		_ = c.Close()
	} else {
		t.Logf("as it should, a newcomer at the cut-off front end alone did not get in: %v", err)
	}

	// A's lease ends: members it still owned would die now.
	waitFronts(t, eps, 1)
	if err := work(ctx, ms, 2, false); err != nil {
		t.Fatal(err)
	}

	for _, p := range proxies {
		p.Heal()
	}
	late, err := w.joinVia(ctx, "late", a.addr)
	if err != nil {
		t.Fatalf("A does not serve once healed: %v", err)
	}
	everyone := append(ms, late)
	if err := work(ctx, everyone, 3, false); err != nil {
		t.Fatal(err)
	}
	if err := w.sync(ctx, late, "end"); err != nil {
		t.Fatal(err)
	}
	w.check()
	if err := w.settle(); err != nil {
		t.Fatal(err)
	}
}
