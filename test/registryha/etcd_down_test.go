//go:build linux

package registryha

import (
	"context"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/etcdtest"
	"github.com/ibisgo/ibis/registry"
)

// outageLength is how long TestEtcdDown keeps every etcd node down.
const outageLength = 10 * time.Second

// Every etcd node is down for 10 s and comes back: each member hears RegistryLost
// (its front end stops serving) and then RegistryRestored, nobody is declared dead,
// and the elections, bound names and sequences from before are there afterwards.
// The death timeout (the front ends' leases) is 15 s, so that the wait for the
// leases of the sessions from before the outage to end stays short.
func TestEtcdDown(t *testing.T) {
	needHA(t)
	cluster := etcdtest.StartCluster(t, 3)
	eps := cluster.Endpoints()
	timeouts := []string{"-heartbeat", "500ms", "-death-timeout", "15s"}
	a := startFrontEnd(t, "A", eps, timeouts...)
	b := startFrontEnd(t, "B", eps, timeouts...)
	w := newWorld(t, a, b)
	ctx, cancel := context.WithTimeout(context.Background(), 4*testTimeout)
	defer cancel()

	ms, err := w.joinAll(ctx, "m", 16)
	if err != nil {
		t.Fatal(err)
	}
	if err := work(ctx, ms, 0, true); err != nil {
		t.Fatal(err)
	}
	const binders = 4
	for _, m := range ms[:binders] {
		if err := m.do(ctx, "Bind", func(ctx context.Context) error { return m.c.Bind(ctx, "name-"+m.tag, "port-"+m.tag) }); err != nil {
			t.Fatal(err)
		}
	}
	winner, err := ms[0].c.ElectionResult(ctx, "e0")
	if err != nil {
		t.Fatal(err)
	}

	if err := cluster.StopAll(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	for _, m := range ms {
		err := m.waitEvents("RegistryLost", func(evs []registry.Event) bool { return count(evs, registry.RegistryLost) >= 1 })
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("every member lost its front end %v after etcd went down", time.Since(down).Round(time.Millisecond))
	// The length of the fault, not a wait for its effect.
	time.Sleep(time.Until(down.Add(outageLength)))
	if err := cluster.StartAll(); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	for _, m := range ms {
		if err := m.waitMoved(1); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("every member restored %v after etcd was back", time.Since(back).Round(time.Millisecond))

	for _, m := range ms {
		got, err := m.c.ElectionResult(ctx, "e0")
		if err != nil || got != winner {
			t.Errorf("%s: election e0 after the outage: %v, %v; want %s", m, got, err, winner)
		}
	}
	for _, binder := range ms[:binders] {
		who, port, err := ms[len(ms)-1].c.Lookup(ctx, "name-"+binder.tag)
		if err != nil || who != binder.id || port != "port-"+binder.tag {
			t.Errorf("lookup of name-%s after the outage: %v %q, %v; want %s %q", binder.tag, who, port, err, binder.id, "port-"+binder.tag)
		}
	}
	if err := work(ctx, ms, 1, true); err != nil {
		t.Fatal(err)
	}
	// The leases of the front ends' sessions from before the outage end: members
	// those sessions still owned would die now.
	waitFronts(t, eps, 2)
	if err := work(ctx, ms, 2, true); err != nil {
		t.Fatal(err)
	}
	if err := w.sync(ctx, ms[0], "end"); err != nil {
		t.Fatal(err)
	}
	w.check()
	if err := w.settle(); err != nil {
		t.Fatal(err)
	}
	if n := len(w.seqs["s"]); n != 3*len(ms) {
		t.Errorf("%d numbers drawn, want %d", n, 3*len(ms))
	}
}
