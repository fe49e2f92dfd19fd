package registry_test

import (
	"context"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/etcdtest"
	"github.com/ibisgo/ibis/registry"
)

// A front end cut off from etcd stops serving: its members lose it (they
// would move to another front end, see the fault tests) instead of being
// served stale state; one that cannot move is declared dead once the cut
// front end's lease has ended, and the pool carries on at the other
// front end.
func TestEtcdPartitionedFrontEndStopsServing(t *testing.T) {
	eps := etcdtest.Embedded(t)
	px := etcdtest.NewProxy(t, eps[0])
	short := []registry.ServerOption{registry.WithHeartbeatInterval(200 * time.Millisecond), registry.WithDeathTimeout(time.Second)}
	a := startReady(t, append(short, registry.WithEtcdStore([]string{px.Addr()}))...)
	b := startReady(t, append(short, registry.WithEtcdStore(eps))...)
	stay := join(t, b, "cut")
	lost := join(t, a, "cut", registry.WithReconnectTimeout(time.Hour))
	waitEvent(t, stay, "joined", isEvent(registry.Joined, lost.Identity()))

	px.Cut()
	waitEvent(t, lost, "registry lost", func(ev registry.Event) bool { return ev.Type == registry.RegistryLost })
	if a.Ready() == nil {
		t.Fatal("cut front end still says it serves")
	}
	waitEvent(t, stay, "Died after the lease", isEvent(registry.Died, lost.Identity()))
	ctx := testContext(t)
	if _, err := stay.Elect(ctx, "still"); err != nil {
		t.Fatalf("pool does not carry on at the other front end: %v", err)
	}

	// Healed, the front end serves again from a fresh read of the store;
	// the dead member stays dead.
	px.Heal()
	eventually(t, "cut front end serving again", func() bool { return a.Ready() == nil })
	mustErrorIs(t, waitDone(t, lost), registry.ErrDeclaredDead)
	late := join(t, a, "cut")
	waitEvent(t, late, "sees the survivor", isEvent(registry.Joined, stay.Identity()))
	if w, err := late.ElectionResult(ctx, "still"); err != nil || w != stay.Identity() {
		t.Fatalf("state after healing: %v, %v", w, err)
	}
}

// waitDone waits for c to end and returns its error.
func waitDone(t *testing.T, c *registry.Client) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	select {
	case <-c.Done():
		return c.Err()
	case <-ctx.Done():
		t.Fatalf("%s did not end", c.Identity())
		return nil
	}
}
