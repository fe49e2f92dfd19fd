//go:build linux

package registryha

import (
	"context"
	"testing"
	"time"

	"github.com/ibisgo/ibis/registry"
)

// stopLength is how long TestStopFrontEnd keeps a front end frozen: longer than the
// silence after which members move (half the default death timeout of 30 s),
// shorter than the front end's lease (the whole death timeout).
const stopLength = 20 * time.Second

// minSilence is the least time after SIGSTOP at which a member may give the stopped
// front end up: half the default death timeout, less a heartbeat interval (the last
// ping it heard may be that old when the front end stops).
const minSilence = registry.DefaultDeathTimeout/2 - registry.DefaultHeartbeatInterval

// A front end with the default timeouts is frozen (SIGSTOP) for 20 s: its members
// move to the other after half the death timeout of silence, nobody is declared
// dead, and once it runs again (SIGCONT) it serves: a new member joins there.
func TestStopFrontEnd(t *testing.T) {
	needHA(t)
	eps, a, _, w := haPool(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*testTimeout)
	defer cancel()

	ms, err := w.joinAll(ctx, "m", 16)
	if err != nil {
		t.Fatal(err)
	}
	if err := work(ctx, ms, 0, false); err != nil {
		t.Fatal(err)
	}
	onA := spreadAt(t, ms, a)

	stopped := time.Now() // before the signal: the silence cannot begin earlier
	a.stop()
	// Everyone works on; the calls of A's members wait until they have moved.
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
	t.Logf("A's %d members moved to B after %v", len(onA), time.Since(stopped).Round(time.Millisecond))
	// None may give A up before half the death timeout of silence (less the
	// interval of the pings it last heard): a load can only make them later.
	for _, m := range onA {
		if lost, _ := m.rec.firstAt(registry.RegistryLost); lost.Sub(stopped) < minSilence {
			t.Errorf("%s gave the stopped front end up %v after it stopped, before %v of silence",
				m, lost.Sub(stopped).Round(time.Millisecond), minSilence)
		}
	}
	// The length of the fault, not a wait for its effect.
	time.Sleep(time.Until(stopped.Add(stopLength)))
	a.cont()

	late, err := w.joinVia(ctx, "late", a.addr)
	if err != nil {
		t.Fatalf("A does not serve after SIGCONT: %v", err)
	}
	everyone := append(ms, late)
	// etcd holds two leases, A's and B's: if A began anew once it ran again, the lease
	// it held before it froze has ended, and members it still owned would die now.
	waitFronts(t, eps, 2)
	if err := work(ctx, everyone, 2, false); err != nil {
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
