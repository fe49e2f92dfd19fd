//go:build linux

package registryha

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/ibisgo/ibis/internal/etcdtest"
	"github.com/ibisgo/ibis/registry"
)

// The etcd leader is killed (SIGKILL) while every member elects, signals and draws
// sequence numbers in a loop, through front ends with the default timeouts: the pool
// carries on (the front ends write again what was in flight), nobody is declared
// dead, the sequence has no gap; then the node comes back, and a front end that
// reaches etcd only through it serves the pool.
func TestKillEtcdLeader(t *testing.T) {
	needHA(t)
	cluster := etcdtest.StartCluster(t, 3)
	eps := cluster.Endpoints()
	a := startFrontEnd(t, "A", eps)
	b := startFrontEnd(t, "B", eps)
	w := newWorld(t, a, b)
	ctx, cancel := context.WithTimeout(context.Background(), 4*testTimeout)
	defer cancel()

	ms, err := w.joinAll(ctx, "m", 16)
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 12
	var progress atomic.Int64 // rounds finished, over all members
	loops := make(chan error, 1)
	go func() {
		loops <- all(len(ms), func(i int) error {
			m := ms[i]
			for r := range rounds {
				if err := m.elect(ctx, fmt.Sprintf("e%d", r)); err != nil {
					return err
				}
				if err := m.signal(ctx, fmt.Sprintf("%s round %d", m.tag, r)); err != nil {
					return err
				}
				if err := m.sequence(ctx, "s"); err != nil {
					return err
				}
				progress.Add(1)
			}
			return nil
		})
	}()
	waitProgress(t, &progress, int64(len(ms)))
	leader, err := cluster.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.Kill(leader); err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd leader node%d killed after %d of %d rounds", leader, progress.Load(), rounds*len(ms))
	if err := <-loops; err != nil {
		t.Fatal(err)
	}

	if err := cluster.Restart(leader); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	// The node is whole again: a front end that reaches etcd through it alone
	// serves the pool as it is, to a newcomer that joins there.
	c := startFrontEnd(t, "C", eps[leader:leader+1])
	t.Cleanup(w.close) // the members leave before C ends
	late, err := w.joinVia(ctx, "late", c.addr)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(late.c.Members()); got != len(ms)+1 {
		t.Errorf("the newcomer at a front end on the restarted etcd node sees %d members, want %d", got, len(ms)+1)
	}
	everyone := append(ms, late)
	if err := work(ctx, everyone, rounds, true); err != nil {
		t.Fatal(err)
	}
	if err := w.sync(ctx, late, "end"); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if n := count(m.rec.snapshot(), registry.RegistryLost); n > 0 {
			t.Logf("%s lost its front end %d times during the failover", m, n)
		}
	}
	w.check()
	if err := w.settle(); err != nil {
		t.Fatal(err)
	}
}

// waitProgress waits until the counter reaches n.
func waitProgress(t *testing.T, progress *atomic.Int64, n int64) {
	t.Helper()
	waitCond(t, fmt.Sprintf("%d rounds done", n), func() bool { return progress.Load() >= n })
}
