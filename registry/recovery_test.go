package registry_test

import (
	"context"
	"errors"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/registry"
)

// Tests of a registry server that goes away and comes back on the same
// address (in this process: Close, then a new server; cross-process with
// SIGKILL in restart_xproc_test.go). No test times anything: each waits for
// the event or state it needs, with testTimeout as the bound.

// serveAt runs a stand-alone (restartable) server on addr ("127.0.0.1:0"
// the first time) and returns it with the address it listens on. The
// server is closed at the end of the test if the test has not closed it.
func serveAt(t *testing.T, addr string, opts ...registry.ServerOption) (*registry.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	opts = append([]registry.ServerOption{registry.WithServerLogger(testLogger(t))}, opts...)
	s := registry.NewServer(opts...)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close server: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return s, ln.Addr().String()
}

// joinAt joins the pool at addr; the client is closed at the end of the
// test.
func joinAt(t *testing.T, addr, pool string, opts ...registry.Option) *registry.Client {
	t.Helper()
	opts = append([]registry.Option{registry.WithLogger(testLogger(t))}, opts...)
	c, err := registry.Join(testContext(t), addr, pool, opts...)
	if err != nil {
		t.Fatalf("join %q: %v", pool, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close client %s: %v", c.Identity(), err)
		}
	})
	return c
}

func isLost(prefix string) func(registry.Event) bool {
	return func(ev registry.Event) bool {
		return ev.Type == registry.RegistryLost && strings.HasPrefix(ev.Name, prefix)
	}
}

func isRestored(ev registry.Event) bool { return ev.Type == registry.RegistryRestored }

// TestRestartRebuildsPool: the members of a pool lose the server, carry on
// (calls fail with ErrRegistryLost, Members stays), and rejoin a new
// server on the same address with their identities, elections, global
// names and sequences. A newcomer waits until they are back and gets a
// fresh member number.
func TestRestartRebuildsPool(t *testing.T) {
	s1, addr := serveAt(t, "127.0.0.1:0")
	ctx := testContext(t)
	c0 := joinAt(t, addr, "r", registry.WithAddress("h:0"))
	c1 := joinAt(t, addr, "r", registry.WithAddress("h:1"))
	c2 := joinAt(t, addr, "r", registry.WithAddress("h:2"), registry.WithTag("two"))
	clients := []*registry.Client{c0, c1, c2}
	if w, err := c0.Elect(ctx, "master"); err != nil || w != c0.Identity() {
		t.Fatalf("elect: %v, %v", w, err)
	}
	if err := c1.Bind(ctx, "svc", "port1"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if v, err := c2.Sequence(ctx, "n"); err != nil || v != int64(i) {
			t.Fatalf("sequence: %d, %v", v, err)
		}
	}
	for _, c := range clients {
		waitEvent(t, c, "Joined of the last member", isEvent(registry.Joined, c2.Identity()))
	}
	before := c0.Members()
	pending := make(chan error, 2)
	go func() {
		_, err := c1.ElectionResult(ctx, "never")
		pending <- err
	}()
	go func() { pending <- c2.WaitUntilTerminated(ctx) }()
	eventually(t, "election result waiting", func() bool { return s1.Stats().Waiting == 1 })

	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		mustErrorIs(t, <-pending, registry.ErrRegistryLost)
	}
	for _, c := range clients {
		ev := waitEvent(t, c, "RegistryLost", isLost(registry.LostReconnecting))
		if ev.Member != c.Identity() || ev.Seq != 0 {
			t.Fatalf("lost event %v", ev)
		}
		_, err := c.Sequence(ctx, "n")
		mustErrorIs(t, err, registry.ErrRegistryLost)
		_, err = c.ElectionResult(ctx, "master")
		mustErrorIs(t, err, registry.ErrRegistryLost)
		mustErrorIs(t, c.WaitUntilTerminated(ctx), registry.ErrRegistryLost)
		select {
		case <-c.Done():
			t.Fatalf("%v ended although the registry may come back: %v", c.Identity(), c.Err())
		default:
		}
		if c.Err() != nil {
			t.Fatalf("%v: Err() = %v while reconnecting", c.Identity(), c.Err())
		}
		if got := c.Members(); !reflect.DeepEqual(got, before) {
			t.Fatalf("members while lost: %v, want %v", got, before)
		}
	}

	// The new server holds back newcomers of pools it does not know until
	// their members have come back.
	s2, _ := serveAt(t, addr, registry.WithRecoveryWindow(testTimeout))
	type joined struct {
		c   *registry.Client
		err error
	}
	newcomer := make(chan joined, 1)
	go func() {
		c, err := registry.Join(ctx, addr, "r", registry.WithLogger(testLogger(t)))
		newcomer <- joined{c, err}
	}()
	for _, c := range clients {
		waitEvent(t, c, "RegistryRestored", isRestored)
		// The members from before, in their order; the newcomer may have joined already
		// (it is let in as soon as the pool is whole again).
		got := c.Members()
		if len(got) < len(before) || len(got) > len(before)+1 || !reflect.DeepEqual(got[:len(before)], before) {
			t.Fatalf("members after the restart: %v, want %v (and perhaps the newcomer)", got, before)
		}
	}
	for _, c := range clients {
		if w, err := c.ElectionResult(ctx, "master"); err != nil || w != c0.Identity() {
			t.Fatalf("election result after the restart: %v, %v", w, err)
		}
		if w, err := c.Elect(ctx, "master"); err != nil || w != c0.Identity() {
			t.Fatalf("elect after the restart: %v, %v", w, err)
		}
		if who, port, err := c.Lookup(ctx, "svc"); err != nil || who != c1.Identity() || port != "port1" {
			t.Fatalf("lookup after the restart: %v %q, %v", who, port, err)
		}
	}
	if v, err := c0.Sequence(ctx, "n"); err != nil || v != 3 {
		t.Fatalf("sequence after the restart: %d, %v (want 3)", v, err)
	}
	nc := <-newcomer
	if nc.err != nil {
		t.Fatal(nc.err)
	}
	defer nc.c.Close()
	if got := nc.c.Identity().ID; got != "3" {
		t.Fatalf("newcomer after the restart got member number %s, want 3", got)
	}
	if got := ids(nc.c.Members()); !reflect.DeepEqual(got, []string{"0", "1", "2", "3"}) {
		t.Fatalf("newcomer's members: %v", got)
	}
	if w, err := nc.c.Elect(ctx, "master"); err != nil || w != c0.Identity() {
		t.Fatalf("newcomer's elect: %v, %v", w, err)
	}
	for _, c := range clients {
		waitEvent(t, c, "newcomer Joined", isEvent(registry.Joined, nc.c.Identity()))
	}
	if st := s2.Stats(); st.Rejoins != 3 || st.Recovering != 0 || st.Members != 4 {
		t.Fatalf("stats of the new server: %v", st)
	}
}

// TestRestartDeclaresMissingMemberDead: a member that does not come back
// is declared dead once the others are back and the grace period has
// passed; its election and name go with it.
func TestRestartDeclaresMissingMemberDead(t *testing.T) {
	s1, addr := serveAt(t, "127.0.0.1:0")
	ctx := testContext(t)
	c0 := joinAt(t, addr, "m")
	c1 := joinAt(t, addr, "m")
	c2, err := registry.Join(ctx, addr, "m")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Elect(ctx, "boss"); err != nil {
		t.Fatal(err)
	}
	if err := c2.Bind(ctx, "x", "p"); err != nil {
		t.Fatal(err)
	}
	gone := c2.Identity()
	// Only members the others know of can be waited for: make sure they
	// heard of the third one before the server goes.
	for _, c := range []*registry.Client{c0, c1} {
		waitEvent(t, c, "Elected of the third member", isEvent(registry.Elected, gone))
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, c2, "RegistryLost", isLost(registry.LostReconnecting))
	if err := c2.Close(); err != nil { // while lost: it never comes back
		t.Fatal(err)
	}
	serveAt(t, addr, registry.WithRecoveryGrace(3*time.Second))
	for _, c := range []*registry.Client{c0, c1} {
		waitEvent(t, c, "RegistryLost", isLost(registry.LostReconnecting))
		// Died comes before RegistryRestored: when the member is back, the
		// pool is whole again.
		waitEvent(t, c, "Died of the missing member", isEvent(registry.Died, gone))
		waitEvent(t, c, "RegistryRestored", isRestored)
		if got := ids(c.Members()); !reflect.DeepEqual(got, []string{"0", "1"}) {
			t.Fatalf("members after the restart: %v", got)
		}
	}
	if w, err := c1.Elect(ctx, "boss"); err != nil || w != c1.Identity() {
		t.Fatalf("the dead member's election is open again: %v, %v", w, err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, _, err := c0.Lookup(short, "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the dead member's name still resolves: %v", err)
	}
	if got := joinAt(t, addr, "m").Identity().ID; got != "3" {
		t.Fatalf("newcomer got member number %s, want 3", got)
	}
}

// TestRestartKeepsClosedWorld: a closed-world pool stays closed (and
// terminated) across a restart.
func TestRestartKeepsClosedWorldAndTermination(t *testing.T) {
	s1, addr := serveAt(t, "127.0.0.1:0")
	ctx := testContext(t)
	c0 := joinAt(t, addr, "cw", registry.WithPoolSize(2))
	c1 := joinAt(t, addr, "cw", registry.WithPoolSize(2))
	for _, c := range []*registry.Client{c0, c1} {
		if err := c.WaitUntilPoolClosed(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := c1.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, c0, "Terminated", isEvent(registry.Terminated, c1.Identity()))
	waitEvent(t, c1, "Terminated", isEvent(registry.Terminated, c1.Identity()))
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	serveAt(t, addr)
	for _, c := range []*registry.Client{c0, c1} {
		ev := waitEvent(t, c, "RegistryRestored or a repeated event", func(ev registry.Event) bool {
			return ev.Type == registry.RegistryRestored || ev.Type == registry.PoolClosed || ev.Type == registry.Terminated
		})
		if ev.Type != registry.RegistryRestored {
			t.Fatalf("%v: repeated event %v after the restart", c.Identity(), ev)
		}
		if err := c.WaitUntilPoolClosed(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.WaitUntilTerminated(ctx); err != nil {
			t.Fatal(err)
		}
	}
	_, err := registry.Join(ctx, addr, "cw", registry.WithPoolSize(2))
	mustErrorIs(t, err, registry.ErrPoolClosed)
}

// TestEmbeddedServerLostForGood: a client of a server that cannot be
// restarted gives up at once and says so.
func TestEmbeddedServerLostForGood(t *testing.T) {
	s, err := registry.StartEmbedded("127.0.0.1:0", registry.WithServerLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	c := join(t, s, "e")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(t, c, "RegistryLost", func(ev registry.Event) bool { return ev.Type == registry.RegistryLost })
	if !strings.HasPrefix(ev.Name, registry.LostForGood) || !strings.Contains(ev.Name, "will not come back") {
		t.Fatalf("lost event %q, want one saying the registry is lost for good", ev.Name)
	}
	<-c.Done()
	mustErrorIs(t, c.Err(), registry.ErrRegistryLost)
	if _, ok := <-c.Events(); ok {
		t.Fatal("an event after the last RegistryLost")
	}
}

// TestReconnectGivesUp: a server that does not come back within the
// reconnect limit is given up, with a last RegistryLost event.
func TestReconnectGivesUp(t *testing.T) {
	s, addr := serveAt(t, "127.0.0.1:0")
	c := joinAt(t, addr, "g", registry.WithReconnectTimeout(200*time.Millisecond))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, c, "RegistryLost", isLost(registry.LostReconnecting))
	ev := waitEvent(t, c, "final RegistryLost", isLost(registry.LostForGood))
	if !strings.Contains(ev.Name, "gave up") {
		t.Fatalf("final lost event %q does not say it gave up", ev.Name)
	}
	<-c.Done()
	mustErrorIs(t, c.Err(), registry.ErrRegistryLost)
	_, err := c.Sequence(testContext(t), "x")
	mustErrorIs(t, err, registry.ErrRegistryLost)
}

// TestReconnectOff: with reconnecting turned off, a lost registry ends the
// client at once.
func TestReconnectOff(t *testing.T) {
	s, addr := serveAt(t, "127.0.0.1:0")
	c := joinAt(t, addr, "off", registry.WithReconnectTimeout(-1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(t, c, "RegistryLost", func(ev registry.Event) bool { return ev.Type == registry.RegistryLost })
	if !strings.HasPrefix(ev.Name, registry.LostForGood) {
		t.Fatalf("lost event %q", ev.Name)
	}
	<-c.Done()
}

// TestCloseWhileReconnecting: Close ends the attempts to rejoin at once.
func TestCloseWhileReconnecting(t *testing.T) {
	s, addr := serveAt(t, "127.0.0.1:0")
	c, err := registry.Join(testContext(t), addr, "cl")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, c, "RegistryLost", isLost(registry.LostReconnecting))
	if err := c.Close(); err != nil {
		t.Fatalf("close while reconnecting: %v", err)
	}
	<-c.Done()
	mustErrorIs(t, c.Err(), registry.ErrClosed)
	_, err = c.Sequence(testContext(t), "x")
	mustErrorIs(t, err, registry.ErrClosed)
}

// TestNewcomerWaitsForRecoveryWindow: a server in its recovery window holds
// back a join into an unknown pool; when nobody of that pool comes back,
// the newcomer joins it afresh once the window has passed.
func TestNewcomerWaitsForRecoveryWindow(t *testing.T) {
	_, addr := serveAt(t, "127.0.0.1:0", registry.WithRecoveryWindow(300*time.Millisecond))
	c := joinAt(t, addr, "fresh")
	if c.Identity().ID != "0" {
		t.Fatalf("first member of a fresh pool: %v", c.Identity())
	}
}
