//go:build linux

package registryha

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ibisgo/ibis/registry"
)

// A member leaves (Close) while its front end is frozen (SIGSTOP): its own front end
// cannot confirm, so the member leaves through the other one. Everyone hears Left for
// it, those at the frozen front end once it runs again, and nobody hears Died; the
// others work on, and the checker finds every promise kept.
func TestLeaveWhileFrontEndStopped(t *testing.T) {
	needHA(t)
	_, a, b, w := haPool(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*testTimeout)
	defer cancel()

	ms, err := w.joinAll(ctx, "m", 8)
	if err != nil {
		t.Fatal(err)
	}
	if err := work(ctx, ms, 0, false); err != nil {
		t.Fatal(err)
	}
	onA := spreadAt(t, ms, a)
	leaver, onB := onA[0], at(ms, b.addr)
	w.mu.Lock()
	w.members = slices.DeleteFunc(w.members, func(m *member) bool { return m == leaver })
	w.mu.Unlock()

	a.stop()
	began := time.Now()
	if err := leaver.c.Close(); err != nil {
		t.Errorf("Close of %s while its front end is stopped: %v", leaver, err)
	}
	t.Logf("%s closed in %v", leaver, time.Since(began).Round(time.Millisecond))
	heard := func(m *member) {
		t.Helper()
		var got registry.Event
		err := m.waitEvents("Left or Died for "+leaver.String(), func(evs []registry.Event) bool {
			i := slices.IndexFunc(evs, func(ev registry.Event) bool {
				return (ev.Type == registry.Left || ev.Type == registry.Died) && ev.Member.ID == leaver.id.ID
			})
			if i >= 0 {
				got = evs[i]
			}
			return i >= 0
		})
		switch {
		case err != nil:
			t.Error(err)
		case got.Type != registry.Left:
			t.Errorf("%s heard %v for %s, which left", m, got, leaver)
		}
	}
	for _, m := range onB {
		heard(m)
	}
	a.cont()
	for _, m := range onA[1:] {
		heard(m)
	}
	rest := slices.DeleteFunc(slices.Clone(ms), func(m *member) bool { return m == leaver })
	if err := work(ctx, rest, 1, false); err != nil {
		t.Fatal(err)
	}
	if err := w.sync(ctx, rest[0], "end"); err != nil {
		t.Fatal(err)
	}
	w.check()
	if err := w.settle(); err != nil {
		t.Fatal(err)
	}
}
