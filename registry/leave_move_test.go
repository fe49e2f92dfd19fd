package registry_test

import (
	"sync"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/etcdtest"
	"github.com/ibisgo/ibis/registry"
)

// A member leaves while its front end A takes no requests but runs: after a second
// it leaves through B. A applies B's takeover and closes the member's old connection
// meanwhile; the member must not take that for a lost registry and rejoin (which
// would take it from its own leave): the pool hears Left, the member's handler gets
// no RegistryLost, and the client ends closed, not declared dead.
func TestLeaveMovesPastAHeldFrontEnd(t *testing.T) {
	eps := etcdtest.Embedded(t)
	a := startReady(t, registry.WithEtcdStore(eps))
	b := startReady(t, registry.WithEtcdStore(eps))
	for round := range 5 {
		px := registry.StartMuteProxy(t, a.Addr())
		pool := "held" + string(rune('a'+round))
		stay := join(t, b, pool)
		var mu sync.Mutex
		var lost []registry.Event
		record := registry.WithEventHandler(func(ev registry.Event) {
			if ev.Type == registry.RegistryLost || ev.Type == registry.RegistryRestored {
				mu.Lock()
				lost = append(lost, ev)
				mu.Unlock()
			}
		})
		var leaver *registry.Client
		for leaver == nil { // Join alternates the front end it tries first
			c, err := registry.Join(testContext(t), px.Addr()+","+b.Addr(), pool, record, registry.WithLogger(testLogger(t)))
			if err != nil {
				t.Fatal(err)
			}
			if c.Addr() == px.Addr() {
				leaver = c
				break
			}
			_ = c.Close()
			waitEvent(t, stay, "Left", isEvent(registry.Left, c.Identity()))
		}
		waitEvent(t, stay, "Joined", isEvent(registry.Joined, leaver.Identity()))
		px.Hold()
		began := time.Now()
		if err := leaver.Close(); err != nil {
			t.Errorf("round %d: Close: %v", round, err)
		}
		took := time.Since(began)
		ev := waitEvent(t, stay, "Left or Died", func(ev registry.Event) bool {
			return (ev.Type == registry.Left || ev.Type == registry.Died) && ev.Member.ID == leaver.Identity().ID
		})
		t.Logf("round %d: Close took %v; the pool heard %v", round, took.Round(time.Millisecond), ev.Type)
		if ev.Type != registry.Left {
			t.Errorf("round %d: the pool heard %v for a member that left", round, ev.Type)
		}
		mu.Lock()
		if len(lost) > 0 {
			t.Errorf("round %d: the leaving member's handler got %v", round, lost)
		}
		mu.Unlock()
		if err := leaver.Err(); err != registry.ErrClosed {
			t.Errorf("round %d: the client ended with %v, want ErrClosed", round, err)
		}
		_ = stay.Close()
	}
}
