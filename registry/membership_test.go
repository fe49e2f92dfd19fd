package registry_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/ibisgo/ibis/registry"
)

func ids(ms []registry.Identifier) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

func TestJoinMembersAndInitialEvents(t *testing.T) {
	s := startServer(t)
	c0 := join(t, s, "p", registry.WithAddress("host:1"), registry.WithTag("first"))
	c1 := join(t, s, "p", registry.WithAddress("host:2"))
	c2 := join(t, s, "p")

	want := registry.Identifier{Pool: "p", ID: "0", Address: "host:1", Tag: "first"}
	if got := c0.Identity(); got != want {
		t.Fatalf("identity %+v, want %+v", got, want)
	}
	if got := c0.Identity().String(); got != "p/0@host:1" {
		t.Fatalf("String() = %q", got)
	}
	if c2.Identity().Number() != 2 {
		t.Fatalf("third member has number %d", c2.Identity().Number())
	}
	// Members() is complete as soon as Join returns.
	if got := ids(c2.Members()); !reflect.DeepEqual(got, []string{"0", "1", "2"}) {
		t.Fatalf("members of the third member: %v", got)
	}

	// The third member sees the earlier members' Joined events first, then
	// its own, in increasing order.
	var last uint64
	for i, want := range []registry.Identifier{c0.Identity(), c1.Identity(), c2.Identity()} {
		ev := nextEvent(t, c2)
		if ev.Type != registry.Joined || ev.Member != want {
			t.Fatalf("event %d of the third member: %v, want Joined %v", i, ev, want)
		}
		if ev.Seq <= last {
			t.Fatalf("event %d: seq %d after %d", i, ev.Seq, last)
		}
		last = ev.Seq
	}
	// The first member sees everyone join after itself, with the same seqs.
	for i, who := range []registry.Identifier{c0.Identity(), c1.Identity(), c2.Identity()} {
		ev := nextEvent(t, c0)
		if ev.Type != registry.Joined || ev.Member != who {
			t.Fatalf("event %d of the first member: %v, want Joined %v", i, ev, who)
		}
	}
	eventually(t, "first member knows all three", func() bool { return len(c0.Members()) == 3 })
	if got := ids(c0.Members()); !reflect.DeepEqual(got, []string{"0", "1", "2"}) {
		t.Fatalf("members of the first member: %v", got)
	}
	if c0.PoolSize() != 0 {
		t.Fatalf("open world pool size %d", c0.PoolSize())
	}
	if c0.HeartbeatInterval() != registry.DefaultHeartbeatInterval {
		t.Fatalf("heartbeat %v", c0.HeartbeatInterval())
	}

	// Pools are separate.
	other := join(t, s, "q")
	if other.Identity().ID != "0" || len(other.Members()) != 1 {
		t.Fatalf("first member of another pool: %v, members %v", other.Identity(), other.Members())
	}
	if st := s.Stats(); st.Pools != 2 || st.Members != 4 || st.Joins != 4 {
		t.Fatalf("stats: %v", st)
	}
}

// TestTotalOrder has several members signal everyone concurrently; every
// member must see the same signals in the same order.
func TestTotalOrder(t *testing.T) {
	s := startServer(t)
	const n, per = 4, 15
	clients := make([]*registry.Client, n)
	for i := range clients {
		clients[i] = join(t, s, "order")
	}
	ctx := testContext(t)
	var wg sync.WaitGroup
	errs := make(chan error, n*per)
	for i, c := range clients {
		wg.Go(func() {
			for j := range per {
				if err := c.Signal(ctx, fmt.Sprintf("s%d-%d", i, j)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var reference []registry.Event
	for i, c := range clients {
		var got []registry.Event
		var last uint64
		for len(got) < n*per {
			ev := nextEvent(t, c)
			if ev.Seq <= last {
				t.Fatalf("member %d: seq %d after %d", i, ev.Seq, last)
			}
			last = ev.Seq
			if ev.Type == registry.Signal {
				got = append(got, ev)
			}
		}
		if reference == nil {
			reference = got
			continue
		}
		if !reflect.DeepEqual(got, reference) {
			t.Fatalf("member %d saw signals in another order than member 0", i)
		}
	}
}

func TestLeave(t *testing.T) {
	s := startServer(t)
	c0 := join(t, s, "p")
	c1 := join(t, s, "p")
	ctx := testContext(t)
	if err := c1.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(t, c0, "Left", isEvent(registry.Left, c1.Identity()))
	if ev.Member != c1.Identity() {
		t.Fatalf("left event names %v", ev.Member)
	}
	if got := ids(c0.Members()); !reflect.DeepEqual(got, []string{"0"}) {
		t.Fatalf("members after leave: %v", got)
	}
	<-c1.Done()
	mustErrorIs(t, c1.Err(), registry.ErrClosed)
	_, err := c1.Sequence(ctx, "x")
	mustErrorIs(t, err, registry.ErrClosed)
	mustErrorIs(t, c1.Leave(ctx), registry.ErrClosed)
	if err := c1.Close(); err != nil {
		t.Fatalf("close after leave: %v", err)
	}
	for range c1.Events() { // closed after leave; drains whatever was queued
	}
	if st := s.Stats(); st.Members != 1 || st.Leaves != 1 || st.Deaths != 0 {
		t.Fatalf("stats: %v", st)
	}
}

func TestEmptyPoolIsForgotten(t *testing.T) {
	s := startServer(t)
	ctx := testContext(t)
	c, err := registry.Join(ctx, s.Addr(), "again", registry.WithPoolSize(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "pool forgotten", func() bool { return s.Stats().Pools == 0 })
	// A closed world of one that was full starts afresh under the same name.
	c2 := join(t, s, "again", registry.WithPoolSize(2))
	if c2.Identity().ID != "0" || c2.PoolSize() != 2 {
		t.Fatalf("fresh pool: %v size %d", c2.Identity(), c2.PoolSize())
	}
}

func TestClosedWorld(t *testing.T) {
	s := startServer(t)
	ctx := testContext(t)
	c0 := join(t, s, "cw", registry.WithPoolSize(3))
	closed := make(chan error, 1)
	go func() { closed <- c0.WaitUntilPoolClosed(ctx) }()
	c1 := join(t, s, "cw", registry.WithPoolSize(3))

	_, err := registry.Join(ctx, s.Addr(), "cw", registry.WithPoolSize(5))
	mustErrorIs(t, err, registry.ErrPoolSize)
	_, err = registry.Join(ctx, s.Addr(), "cw")
	mustErrorIs(t, err, registry.ErrPoolSize)

	select {
	case err := <-closed:
		t.Fatalf("pool closed with two of three members: %v", err)
	default:
	}
	c2 := join(t, s, "cw", registry.WithPoolSize(3))
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	for _, c := range []*registry.Client{c0, c1, c2} {
		if err := c.WaitUntilPoolClosed(ctx); err != nil {
			t.Fatal(err)
		}
		ev := waitEvent(t, c, "PoolClosed", func(ev registry.Event) bool { return ev.Type == registry.PoolClosed })
		if ev.Member != c2.Identity() {
			t.Fatalf("PoolClosed names %v, want the last joiner %v", ev.Member, c2.Identity())
		}
		if c.PoolSize() != 3 || len(c.Members()) != 3 {
			t.Fatalf("pool size %d, members %v", c.PoolSize(), c.Members())
		}
	}
	_, err = registry.Join(ctx, s.Addr(), "cw", registry.WithPoolSize(3))
	mustErrorIs(t, err, registry.ErrPoolClosed)

	open := join(t, s, "open")
	mustErrorIs(t, open.WaitUntilPoolClosed(ctx), registry.ErrNotClosedWorld)
}

func TestTerminate(t *testing.T) {
	s := startServer(t)
	ctx := testContext(t)
	c0 := join(t, s, "t")
	c1 := join(t, s, "t")
	done := make(chan error, 1)
	go func() { done <- c0.WaitUntilTerminated(ctx) }()
	if err := c1.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := c1.WaitUntilTerminated(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*registry.Client{c0, c1} {
		waitEvent(t, c, "Terminated", isEvent(registry.Terminated, c1.Identity()))
	}
	if err := c0.Terminate(ctx); err != nil {
		t.Fatalf("second terminate: %v", err)
	}
	_, err := registry.Join(ctx, s.Addr(), "t")
	mustErrorIs(t, err, registry.ErrPoolClosed)

	short, cancel := context.WithCancel(ctx)
	cancel()
	other := join(t, s, "not-terminated")
	if err := other.WaitUntilTerminated(short); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait with a cancelled context: %v", err)
	}
}
