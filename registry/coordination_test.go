package registry_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ibisgo/ibis/registry"
)

func TestElectConcurrentCandidatesAgree(t *testing.T) {
	s := startServer(t)
	ctx := testContext(t)
	const n = 6
	clients := make([]*registry.Client, n)
	for i := range clients {
		clients[i] = join(t, s, "e")
	}
	winners := make([]registry.Identifier, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() { winners[i], errs[i] = c.Elect(ctx, "leader") })
	}
	wg.Wait()
	for i := range clients {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if winners[i] != winners[0] {
			t.Fatalf("candidate %d got winner %v, candidate 0 got %v", i, winners[i], winners[0])
		}
	}
	winner := winners[0]
	if winner.Number() < 0 || winner.Number() >= n {
		t.Fatalf("winner %v is not a candidate", winner)
	}
	for _, c := range clients {
		got, err := c.ElectionResult(ctx, "leader")
		if err != nil || got != winner {
			t.Fatalf("election result %v, %v; want %v", got, err, winner)
		}
		ev := waitEvent(t, c, "Elected", func(ev registry.Event) bool { return ev.Type == registry.Elected })
		if ev.Member != winner || ev.Name != "leader" {
			t.Fatalf("elected event %v, want %v leader", ev, winner)
		}
	}

	// The winner leaves: the election is open again, and everyone left
	// agrees on a new winner.
	var rest []*registry.Client
	for _, c := range clients {
		if c.Identity() == winner {
			if err := c.Leave(ctx); err != nil {
				t.Fatal(err)
			}
		} else {
			rest = append(rest, c)
		}
	}
	for _, c := range rest {
		waitEvent(t, c, "Left", isEvent(registry.Left, winner))
	}
	again := make([]registry.Identifier, len(rest))
	for i, c := range rest {
		wg.Go(func() { again[i], errs[i] = c.Elect(ctx, "leader") })
	}
	wg.Wait()
	for i := range rest {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if again[i] != again[0] || again[i] == winner {
			t.Fatalf("after the winner left: candidate %d got %v, candidate 0 got %v (old winner %v)",
				i, again[i], again[0], winner)
		}
	}
}

func TestElectionResultWaitsForWinner(t *testing.T) {
	s := startServer(t)
	ctx := testContext(t)
	c0 := join(t, s, "e")
	c1 := join(t, s, "e")

	type result struct {
		id  registry.Identifier
		err error
	}
	res := make(chan result, 1)
	go func() {
		id, err := c0.ElectionResult(ctx, "master")
		res <- result{id, err}
	}()
	eventually(t, "election result request waiting at the server", func() bool { return s.Stats().Waiting == 1 })
	w, err := c1.Elect(ctx, "master")
	if err != nil || w != c1.Identity() {
		t.Fatalf("elect: %v, %v", w, err)
	}
	r := <-res
	if r.err != nil || r.id != c1.Identity() {
		t.Fatalf("election result: %v, %v; want %v", r.id, r.err, c1.Identity())
	}

	// Giving up on a waiting request frees it at the server.
	short, cancel := context.WithCancel(ctx)
	go func() {
		id, err := c0.ElectionResult(short, "nobody-runs")
		res <- result{id, err}
	}()
	eventually(t, "second request waiting", func() bool { return s.Stats().Waiting == 1 })
	cancel()
	if r := <-res; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled election result: %v, %v", r.id, r.err)
	}
	eventually(t, "cancelled request dropped at the server", func() bool { return s.Stats().Waiting == 0 })

	_, err = c0.Elect(ctx, "")
	mustErrorIs(t, err, registry.ErrInvalid)
}

func TestSignal(t *testing.T) {
	s := startServer(t)
	ctx := testContext(t)
	c0 := join(t, s, "sig")
	c1 := join(t, s, "sig")
	c2 := join(t, s, "sig")
	isSignal := func(ev registry.Event) bool { return ev.Type == registry.Signal }

	if err := c0.Signal(ctx, "just you", c1.Identity(), c1.Identity()); err != nil {
		t.Fatal(err)
	}
	if err := c0.Signal(ctx, "everyone"); err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(t, c1, "Signal", isSignal)
	if ev.Name != "just you" || ev.Member != c0.Identity() {
		t.Fatalf("c1 got %v", ev)
	}
	if ev := waitEvent(t, c1, "Signal", isSignal); ev.Name != "everyone" {
		t.Fatalf("c1's second signal: %v (duplicate targets must get one signal)", ev)
	}
	for _, c := range []*registry.Client{c0, c2} {
		if ev := waitEvent(t, c, "Signal", isSignal); ev.Name != "everyone" {
			t.Fatalf("%v got %v, which was not addressed to it", c.Identity(), ev)
		}
	}

	stranger := registry.Identifier{Pool: "sig", ID: "99"}
	mustErrorIs(t, c0.Signal(ctx, "x", c1.Identity(), stranger), registry.ErrNotMember)
	mustErrorIs(t, c0.Signal(ctx, "x", registry.Identifier{Pool: "other", ID: "0"}), registry.ErrNotMember)
	mustErrorIs(t, c0.Signal(ctx, ""), registry.ErrInvalid)
	if err := c0.Signal(ctx, "x", stranger); !strings.Contains(err.Error(), `"99"`) {
		t.Fatalf("error does not name the bad target: %v", err)
	}
}

func TestSequence(t *testing.T) {
	s := startServer(t)
	ctx := testContext(t)
	const n, per = 4, 25
	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	for range n {
		c := join(t, s, "seq")
		wg.Go(func() {
			for range per {
				v, err := c.Sequence(ctx, "tickets")
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got = append(got, v)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(got)
	for i, v := range got {
		if v != int64(i) {
			t.Fatalf("sorted sequence numbers: %v", got)
		}
	}
	if len(got) != n*per {
		t.Fatalf("%d numbers, want %d", len(got), n*per)
	}
	c := join(t, s, "seq")
	if v, err := c.Sequence(ctx, "other"); err != nil || v != 0 {
		t.Fatalf("a new sequence starts at %d, %v", v, err)
	}
	c2 := join(t, s, "another-pool")
	if v, err := c2.Sequence(ctx, "tickets"); err != nil || v != 0 {
		t.Fatalf("sequences are per pool: got %d, %v", v, err)
	}
}

func TestBindLookup(t *testing.T) {
	s := startServer(t)
	ctx := testContext(t)
	c0 := join(t, s, "names")
	c1 := join(t, s, "names")

	type result struct {
		id   registry.Identifier
		port string
		err  error
	}
	res := make(chan result, 1)
	lookup := func(c *registry.Client, ctx context.Context, name string) {
		id, port, err := c.Lookup(ctx, name)
		res <- result{id, port, err}
	}
	// Lookup before bind waits until the name is bound.
	go lookup(c1, ctx, "server")
	eventually(t, "lookup waiting at the server", func() bool { return s.Stats().Waiting == 1 })
	if err := c0.Bind(ctx, "server", "rport"); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.err != nil || r.id != c0.Identity() || r.port != "rport" {
		t.Fatalf("lookup: %v %q %v", r.id, r.port, r.err)
	}
	// Bound names are found at once.
	if id, port, err := c0.Lookup(ctx, "server"); err != nil || id != c0.Identity() || port != "rport" {
		t.Fatalf("lookup of a bound name: %v %q %v", id, port, err)
	}
	mustErrorIs(t, c1.Bind(ctx, "server", "p2"), registry.ErrAlreadyBound)
	mustErrorIs(t, c1.Unbind(ctx, "server"), registry.ErrNotBound)
	mustErrorIs(t, c1.Unbind(ctx, "never-bound"), registry.ErrNotBound)
	if err := c0.Unbind(ctx, "server"); err != nil {
		t.Fatal(err)
	}
	go lookup(c1, ctx, "server")
	eventually(t, "lookup after unbind waits", func() bool { return s.Stats().Waiting == 1 })
	if err := c1.Bind(ctx, "server", "p2"); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.err != nil || r.id != c1.Identity() || r.port != "p2" {
		t.Fatalf("lookup after rebinding: %v %q %v", r.id, r.port, r.err)
	}

	// A member's names go when it leaves.
	if err := c1.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c0.Bind(ctx, "server", "mine"); err != nil {
		t.Fatalf("bind after the owner left: %v", err)
	}
	mustErrorIs(t, c0.Bind(ctx, "", "x"), registry.ErrInvalid)
	_, _, err := c0.Lookup(ctx, strings.Repeat("n", registry.MaxStringLength+1))
	mustErrorIs(t, err, registry.ErrInvalid)
}

func TestTooManyWaitingRequests(t *testing.T) {
	s := startServer(t, registry.WithMaxWaitingRequests(1))
	ctx := testContext(t)
	c := join(t, s, "w")
	short, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Lookup(short, "a")
		done <- err
	}()
	eventually(t, "first lookup waiting", func() bool { return s.Stats().Waiting == 1 })
	_, _, err := c.Lookup(ctx, "b")
	mustErrorIs(t, err, registry.ErrTooManyRequests)
	cancel()
	mustErrorIs(t, <-done, context.Canceled)
}

func TestRequestTooLarge(t *testing.T) {
	s := startServer(t, registry.WithMaxFrameSize(registry.MinMaxFrameSize))
	ctx := testContext(t)
	c := join(t, s, "big")
	err := c.Signal(ctx, strings.Repeat("x", 2*registry.MinMaxFrameSize))
	mustErrorIs(t, err, registry.ErrTooLarge)
	if _, err := c.Sequence(ctx, "still-works"); err != nil {
		t.Fatalf("client unusable after refusing a large request: %v", err)
	}
}
