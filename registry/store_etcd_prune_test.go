package registry_test

import (
	"encoding/hex"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/etcdtest"
	"github.com/ibisgo/ibis/registry"
)

// poolOps counts the ops of pool in etcd (the store's key layout:
// /ibis/registry/ops/p/<pool in hex>/...).
func poolOps(t *testing.T, cli *clientv3.Client, pool string) int64 {
	t.Helper()
	resp, err := cli.Get(testContext(t), "/ibis/registry/ops/p/"+hex.EncodeToString([]byte(pool))+"/",
		clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

// The ops of a pool that has ended are deleted from etcd; those of a live
// pool stay. After etcd has compacted its history, a front end that starts
// then rebuilds the live pool from what is left: its members, election and
// sequence, and the ended pool's name starts afresh.
func TestEtcdPrunesEndedPools(t *testing.T) {
	eps := etcdtest.Embedded(t)
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	short := []registry.ServerOption{registry.WithHeartbeatInterval(200 * time.Millisecond), registry.WithDeathTimeout(time.Second),
		registry.WithEtcdStore(eps)}
	a := startReady(t, short...)
	b := startReady(t, short...)
	ctx := testContext(t)

	stay1 := join(t, a, "long")
	stay2 := join(t, b, "long")
	if _, err := stay1.Elect(ctx, "boss"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := stay2.Sequence(ctx, "seq"); err != nil {
			t.Fatal(err)
		}
	}

	var gone []*registry.Client
	for i := range 3 {
		c := join(t, []*registry.Server{a, b}[i%2], "short")
		if _, err := c.Elect(ctx, "e"); err != nil {
			t.Fatal(err)
		}
		gone = append(gone, c)
	}
	if n := poolOps(t, cli, "short"); n < 6 {
		t.Fatalf("%d ops of the pool in etcd, want its joins and elections", n)
	}
	for _, c := range gone {
		if err := c.Leave(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// After the delay that lets retried writes end (twice the lease's time to live).
	eventually(t, "the ended pool's ops deleted", func() bool { return poolOps(t, cli, "short") == 0 })
	if n := poolOps(t, cli, "long"); n < 5 {
		t.Fatalf("%d ops of the live pool left, want its 2 joins, election and 3 sequence numbers", n)
	}

	status, err := cli.Get(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Compact(ctx, status.Header.Revision); err != nil {
		t.Fatal(err)
	}

	c := startReady(t, short...)
	late := join(t, c, "long")
	seen := map[registry.Identifier]bool{}
	for len(seen) < 2 {
		ev := waitEvent(t, late, "the live members", func(ev registry.Event) bool { return ev.Type == registry.Joined })
		if ev.Member != late.Identity() {
			seen[ev.Member] = true
		}
	}
	if !seen[stay1.Identity()] || !seen[stay2.Identity()] {
		t.Fatalf("the late member saw %v, want %v and %v", seen, stay1.Identity(), stay2.Identity())
	}
	if w, err := late.ElectionResult(ctx, "boss"); err != nil || w != stay1.Identity() {
		t.Fatalf("election after the pruning: %v, %v; want %v", w, err, stay1.Identity())
	}
	if v, err := late.Sequence(ctx, "seq"); err != nil || v != 3 {
		t.Fatalf("sequence after the pruning: %d, %v; want 3", v, err)
	}
	again := join(t, c, "short")
	if again.Identity().ID != "0" {
		t.Fatalf("the ended pool's name did not start afresh: %v", again.Identity())
	}
	// The front ends that were there all along agree.
	if v, err := stay1.Sequence(ctx, "seq"); err != nil || v != 4 {
		t.Fatalf("sequence at the first front end: %d, %v; want 4", v, err)
	}
}
