package registry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ibisgo/ibis/registry"
)

// Two goroutines closing the same client (say the event handler on
// Terminated and main), or a Leave and a Close: the later one waits for
// the leave under way, so the other members see Left, never Died.
func TestConcurrentCloseGivesLeft(t *testing.T) {
	s := startServer(t)
	obs := join(t, s, "cc")
	ctx := testContext(t)
	for i := range 30 {
		c, err := registry.Join(ctx, s.Addr(), "cc", registry.WithLogger(testLogger(t)))
		if err != nil {
			t.Fatal(err)
		}
		waitEvent(t, obs, "joined", isEvent(registry.Joined, c.Identity()))
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for j := range errs {
			wg.Go(func() {
				if i%2 == 1 && j == 0 {
					if err := c.Leave(ctx); err != nil && !errors.Is(err, registry.ErrClosed) {
						errs[j] = err
					}
					return
				}
				errs[j] = c.Close()
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: concurrent leave/close: %v", i, err)
			}
		}
		ev := waitEvent(t, obs, "gone", func(ev registry.Event) bool {
			return (ev.Type == registry.Left || ev.Type == registry.Died) && ev.Member.ID == c.Identity().ID
		})
		if ev.Type != registry.Left {
			t.Fatalf("round %d: a clean concurrent close was reported as %v", i, ev)
		}
		mustErrorIs(t, c.Err(), registry.ErrClosed)
	}
}

// With the default limits one member cannot make the server hold more
// than a bounded amount of names: the reviewer's reproducer made the
// server keep 2000 distinct sequence names of 64 KiB and park 2000
// lookups of 64 KiB names.
func TestDefaultLimitsBoundNames(t *testing.T) {
	s := startServer(t)
	c := join(t, s, "mem")
	ctx := testContext(t)
	name := func(i int) string {
		return fmt.Sprintf("%s%08d", strings.Repeat("x", registry.MaxStringLength-8), i)
	}

	seqs := 0
	for ; ; seqs++ {
		if _, err := c.Sequence(ctx, name(seqs)); err != nil {
			mustErrorIs(t, err, registry.ErrTooManyRequests)
			if !strings.Contains(err.Error(), "per pool") {
				t.Fatalf("error does not name the limit: %v", err)
			}
			break
		}
		if seqs > 2000 {
			t.Fatal("no limit on the bytes of sequence names")
		}
	}
	if want := registry.DefaultMaxPoolNameBytes / registry.MaxStringLength; seqs != want {
		t.Fatalf("%d sequences of %d bytes fit, want %d", seqs, registry.MaxStringLength, want)
	}
	// Existing sequences go on.
	if v, err := c.Sequence(ctx, name(0)); err != nil || v != 1 {
		t.Fatalf("existing sequence: %d, %v", v, err)
	}

	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	want := registry.DefaultMaxMemberNameBytes / registry.MaxStringLength
	var wg sync.WaitGroup
	for i := range want {
		wg.Go(func() { _, _, _ = c.Lookup(lctx, name(i)) })
	}
	eventually(t, "lookups parked", func() bool { return s.Stats().Waiting == want })
	_, _, err := c.Lookup(ctx, name(want))
	mustErrorIs(t, err, registry.ErrTooManyRequests)
	if !strings.Contains(err.Error(), "per member") {
		t.Fatalf("error does not name the limit: %v", err)
	}
	if n := s.Stats().Waiting; n != want {
		t.Fatalf("%d requests waiting, want %d", n, want)
	}
	cancel()
	wg.Wait()
	eventually(t, "cancelled lookups dropped", func() bool { return s.Stats().Waiting == 0 })
	// The bytes were released: a lookup may wait again.
	lctx2, cancel2 := context.WithCancel(ctx)
	defer cancel2()
	wg.Go(func() { _, _, _ = c.Lookup(lctx2, name(0)) })
	eventually(t, "lookup parked again", func() bool { return s.Stats().Waiting == 1 })
	cancel2()
	wg.Wait()
}

// The bytes of names one member holds cover its waiting requests, bound
// names (with ports) and won elections, and are released with them.
func TestMemberNameBytesLimit(t *testing.T) {
	const limit = 2 * registry.MaxStringLength
	s := startServer(t, registry.WithMaxMemberNameBytes(1)) // raised to the minimum
	ctx := testContext(t)
	a := join(t, s, "mb")
	b := join(t, s, "mb")
	half := strings.Repeat("h", limit/2)

	// A binding of a full-length name and port fits exactly.
	if err := a.Bind(ctx, half, strings.Repeat("p", limit/2)); err != nil {
		t.Fatal(err)
	}
	_, err := a.Elect(ctx, "e")
	mustErrorIs(t, err, registry.ErrTooManyRequests)
	mustErrorIs(t, a.Bind(ctx, "n", ""), registry.ErrTooManyRequests)
	_, err = a.ElectionResult(ctx, "e")
	mustErrorIs(t, err, registry.ErrTooManyRequests)
	if !strings.Contains(err.Error(), "per member") {
		t.Fatalf("error does not name the limit: %v", err)
	}
	// Another member has its own budget and may win the election; the
	// full member can still learn an existing winner (nothing is held).
	if _, err := b.Elect(ctx, "e"); err != nil {
		t.Fatal(err)
	}
	if w, err := a.ElectionResult(ctx, "e"); err != nil || w != b.Identity() {
		t.Fatalf("election result: %v, %v", w, err)
	}
	if err := a.Unbind(ctx, half); err != nil {
		t.Fatal(err)
	}
	// Released: now a waiting lookup and a won election fit.
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { _, _, _ = a.Lookup(lctx, half) })
	eventually(t, "lookup parked", func() bool { return s.Stats().Waiting == 1 })
	if _, err := a.Elect(ctx, strings.Repeat("e", limit/2)); err != nil {
		t.Fatal(err)
	}
	_, err = a.Elect(ctx, "one byte too many")
	mustErrorIs(t, err, registry.ErrTooManyRequests)
	// The answered lookup gives its bytes back.
	if err := b.Bind(ctx, half, "port"); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if _, err := a.Elect(ctx, "fits again"); err != nil {
		t.Fatal(err)
	}
}

// Sequences, elections and bound names are capped in number per pool;
// names of a member go with it.
func TestPoolNamesLimit(t *testing.T) {
	s := startServer(t, registry.WithMaxPoolNames(3))
	ctx := testContext(t)
	a := join(t, s, "pn")
	b := join(t, s, "pn")
	other := join(t, s, "pn-other")
	for i := range 3 {
		if _, err := a.Sequence(ctx, fmt.Sprint("s", i)); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Elect(ctx, fmt.Sprint("e", i)); err != nil {
			t.Fatal(err)
		}
		if err := a.Bind(ctx, fmt.Sprint("n", i), "p"); err != nil {
			t.Fatal(err)
		}
	}
	_, err := b.Sequence(ctx, "s3")
	mustErrorIs(t, err, registry.ErrTooManyRequests)
	if !strings.Contains(err.Error(), "3 sequences") {
		t.Fatalf("error does not name the limit: %v", err)
	}
	_, err = b.Elect(ctx, "e3")
	mustErrorIs(t, err, registry.ErrTooManyRequests)
	mustErrorIs(t, b.Bind(ctx, "n3", "p"), registry.ErrTooManyRequests)
	// What exists still works, and other pools are not affected.
	if v, err := b.Sequence(ctx, "s0"); err != nil || v != 1 {
		t.Fatalf("existing sequence: %d, %v", v, err)
	}
	if w, err := b.Elect(ctx, "e0"); err != nil || w != a.Identity() {
		t.Fatalf("existing election: %v, %v", w, err)
	}
	if _, err := other.Sequence(ctx, "s3"); err != nil {
		t.Fatal(err)
	}
	if err := a.Unbind(ctx, "n0"); err != nil {
		t.Fatal(err)
	}
	if err := b.Bind(ctx, "n3", "p"); err != nil {
		t.Fatal(err)
	}
	// a's elections and names go when it leaves (b keeps n3); sequences
	// stay.
	if err := a.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := b.Elect(ctx, fmt.Sprint("e", i+10)); err != nil {
			t.Fatal(err)
		}
	}
	_, err = b.Elect(ctx, "e13")
	mustErrorIs(t, err, registry.ErrTooManyRequests)
	for i := range 2 {
		if err := b.Bind(ctx, fmt.Sprint("n", i+4), "p"); err != nil {
			t.Fatal(err)
		}
	}
	mustErrorIs(t, b.Bind(ctx, "n6", "p"), registry.ErrTooManyRequests)
	_, err = b.Sequence(ctx, "s4")
	mustErrorIs(t, err, registry.ErrTooManyRequests)
}

// The bytes of a pool's names are capped together.
func TestPoolNameBytesLimit(t *testing.T) {
	s := startServer(t, registry.WithMaxPoolNameBytes(1)) // raised to the minimum
	ctx := testContext(t)
	a := join(t, s, "pb")
	b := join(t, s, "pb")
	full := func(c byte) string { return strings.Repeat(string(c), registry.MaxStringLength) }
	if _, err := a.Sequence(ctx, full('s')); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Elect(ctx, full('e')); err != nil {
		t.Fatal(err)
	}
	_, err := b.Sequence(ctx, "x")
	mustErrorIs(t, err, registry.ErrTooManyRequests)
	if !strings.Contains(err.Error(), "per pool") {
		t.Fatalf("error does not name the limit: %v", err)
	}
	mustErrorIs(t, a.Bind(ctx, "x", ""), registry.ErrTooManyRequests)
	// b's election goes with b.
	if err := b.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Bind(ctx, full('n'), ""); err != nil {
		t.Fatal(err)
	}
	_, err = a.Elect(ctx, "x")
	mustErrorIs(t, err, registry.ErrTooManyRequests)
}

// Error replies quote names shortened: a refused request with a name of
// the longest length must not make an error text the client refuses (which
// used to end the client with a protocol error).
func TestErrorWithLongNameKeepsClient(t *testing.T) {
	s := startServer(t)
	ctx := testContext(t)
	a := join(t, s, "long")
	b := join(t, s, "long")
	name := strings.Repeat("n", registry.MaxStringLength)
	port := strings.Repeat("p", registry.MaxStringLength)
	if err := a.Bind(ctx, name, port); err != nil {
		t.Fatal(err)
	}
	err := b.Bind(ctx, name, port)
	mustErrorIs(t, err, registry.ErrAlreadyBound)
	mustErrorIs(t, b.Unbind(ctx, name), registry.ErrNotBound)
	if _, err := b.Sequence(ctx, "still-works"); err != nil {
		t.Fatalf("client unusable after an error about a long name: %v", err)
	}
}
