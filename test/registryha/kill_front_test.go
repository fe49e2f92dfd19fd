//go:build linux

package registryha

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// shortTimeouts make a front end's lease (its death timeout) end within seconds, for
// the tests that wait for it and are not about the default timeouts.
var shortTimeouts = []string{"-heartbeat", "500ms", "-death-timeout", "10s"}

// A front end is killed (SIGKILL) while members join, elect and signal: its members
// move to the other front end (RegistryLost, then RegistryRestored) and the work
// goes on; nobody is declared dead, also once the killed front end's lease has
// ended; the checker finds every promise kept.
func TestKillFrontEnd(t *testing.T) {
	needHA(t)
	eps, a, b, w := haPool(t, shortTimeouts...)
	ctx, cancel := context.WithTimeout(context.Background(), 4*testTimeout)
	defer cancel()

	first, err := w.joinAll(ctx, "m", 8)
	if err != nil {
		t.Fatal(err)
	}
	onA := spreadAt(t, first, a)
	for r := range 2 {
		if err := work(ctx, first, r, false); err != nil {
			t.Fatal(err)
		}
	}

	// Eight more join, and the first eight go on electing and signalling, while A
	// is killed.
	var second []*member
	joined := make(chan error, 1)
	go func() {
		var err error
		second, err = w.joinAll(ctx, "n", 8)
		joined <- err
	}()
	busy := make(chan error, 1)
	go func() {
		for r := 2; r < 5; r++ {
			if err := work(ctx, first, r, false); err != nil {
				busy <- err
				return
			}
		}
		busy <- nil
	}()
	waitMembers(t, w, len(first)+1)
	a.kill()
	if err := <-joined; err != nil {
		t.Fatal(err)
	}
	if err := <-busy; err != nil {
		t.Fatal(err)
	}
	for _, m := range onA {
		if err := m.waitMoved(1); err != nil {
			t.Fatal(err)
		}
	}
	everyone := append(slices.Clone(first), second...)
	for _, m := range everyone {
		if m.c.Addr() != b.addr {
			t.Errorf("%s is at %s after A was killed, want B at %s", m, m.c.Addr(), b.addr)
		}
	}

	// A's lease ends: the members it still owned would die now.
	waitFronts(t, eps, 1)
	for r := 5; r < 7; r++ {
		if err := work(ctx, everyone, r, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.sync(ctx, everyone[0], "end"); err != nil {
		t.Fatal(err)
	}
	w.check()
	if err := w.settle(); err != nil {
		t.Fatal(err)
	}
}

// waitMembers waits until at least n members have joined.
func waitMembers(t *testing.T, w *world, n int) {
	t.Helper()
	waitCond(t, fmt.Sprintf("%d members joined", n), func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.members) >= n
	})
}

// waitCond polls cond until it holds, for states that no event announces.
func waitCond(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, testTimeout)
		}
		time.Sleep(time.Millisecond)
	}
}
