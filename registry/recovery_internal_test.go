package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

// untilReply reads until the reply to request id and returns it with the
// events received before it.
func (r *rawClient) untilReply(id uint64) (*message, []Event) {
	r.t.Helper()
	var evs []Event
	for {
		m, err := r.recv()
		if err != nil {
			r.t.Fatalf("waiting for reply %d: %v", id, err)
		}
		switch {
		case m.Kind == kindEvent:
			evs = append(evs, *m.Event)
		case m.Kind == kindReply && m.ID == id:
			return m, evs
		}
	}
}

func (r *rawClient) rejoin(id Identifier, epoch uint64) *message {
	r.t.Helper()
	return r.rejoinPool(id.Pool, id, epoch)
}

func (r *rawClient) rejoinPool(pool string, id Identifier, epoch uint64) *message {
	r.t.Helper()
	r.send(&message{Kind: kindJoin, ID: 1, Version: ProtocolVersion, Pool: pool, Rejoin: &id, Epoch: epoch})
	return r.reply(1)
}

func wantCode(t *testing.T, what string, rep *message, code errCode) {
	t.Helper()
	if rep.Code != code {
		t.Fatalf("%s: reply %+v, want code %d", what, rep, code)
	}
}

// TestRejoinProtocol drives the server's side of a rebuild by hand: the
// refusals, the recovering pool's rules, and what each member hears.
func TestRejoinProtocol(t *testing.T) {
	s := internalServer(t, WithRestartable(true), WithRecoveryGrace(time.Hour))
	id := func(n int) Identifier {
		return Identifier{Pool: "q", ID: fmt.Sprint(n), Address: fmt.Sprintf("h:%d", n)}
	}
	const oldEpoch = 12345

	t.Run("refusals", func(t *testing.T) {
		r := dialRaw(t, s)
		r.send(&message{Kind: kindJoin, ID: 1, Version: 1, Pool: "q", Rejoin: &Identifier{Pool: "q", ID: "1"}})
		wantCode(t, "rejoin over version 1", r.reply(1), codeVersion)
		wantCode(t, "rejoin of another pool", r.rejoinPool("q", Identifier{Pool: "other", ID: "1"}, oldEpoch), codeInvalid)
		wantCode(t, "rejoin with a non-number", r.rejoin(Identifier{Pool: "q", ID: "01"}, oldEpoch), codeInvalid)
		wantCode(t, "rejoin with a negative number", r.rejoin(Identifier{Pool: "q", ID: "-1"}, oldEpoch), codeInvalid)
		wantCode(t, "rejoin of this very run", r.rejoin(id(1), s.epoch), codeNotMember)

		live := dialRaw(t, s)
		live.join("running")
		wantCode(t, "rejoin of a pool that carries on", r.rejoin(Identifier{Pool: "running", ID: "7"}, oldEpoch), codeNotMember)
		if st := s.Stats(); st.Pools != 1 || st.Recovering != 0 {
			t.Fatalf("refused rejoins left state: %v", st)
		}
		live.send(&message{Kind: kindRestore, ID: 2, Won: []string{"x"}})
		wantCode(t, "restore by a member that joined", live.reply(2), codeInvalid)
		live.send(&message{Kind: kindResume, ID: 3})
		wantCode(t, "resume by a member that joined", live.reply(3), codeInvalid)
	})

	// Two members of a lost run come back and rebuild pool q.
	r2 := dialRaw(t, s)
	rep := r2.rejoin(id(2), oldEpoch)
	if rep.Code != codeNone || *rep.Member != id(2) || rep.Epoch != s.epoch || rep.Flags&flagRestartable == 0 {
		t.Fatalf("rejoin reply %+v", rep)
	}
	r2.send(&message{Kind: kindSequence, ID: 2, Name: "s"})
	wantCode(t, "request while rejoining", r2.reply(2), codeRecovering)
	newcomer := dialRaw(t, s)
	newcomer.send(&message{Kind: kindJoin, ID: 1, Version: ProtocolVersion, Pool: "q"})
	wantCode(t, "newcomer while the pool is rebuilt", newcomer.reply(1), codeRecovering)
	r2.send(&message{Kind: kindRestore, ID: 3, Members: []Identifier{id(2), id(4), id(6)},
		Won: []string{"e"}, Bound: []boundName{{"n", "port"}}, Seqs: []sequenceMark{{"s", 7}}})
	wantCode(t, "restore", r2.reply(3), codeNone)
	r2.send(&message{Kind: kindResume, ID: 4, LastSeq: 10, NextNum: 7, JoinSeq: 3})
	if st := s.Stats(); st.Recovering != 1 || st.Rejoins != 1 {
		t.Fatalf("stats while rebuilding: %v", st)
	}

	// Member 6 comes back and leaves; member 4 comes back, on a connection
	// that breaks, and again.
	r6 := dialRaw(t, s)
	wantCode(t, "rejoin of 6", r6.rejoin(id(6), oldEpoch), codeNone)
	r6.send(&message{Kind: kindLeave, ID: 2})
	wantCode(t, "leave while rebuilding", r6.reply(2), codeNone)
	wantCode(t, "rejoin after leaving", dialRaw(t, s).rejoin(id(6), oldEpoch), codeNotMember)
	broken := dialRaw(t, s)
	wantCode(t, "rejoin of 4", broken.rejoin(id(4), oldEpoch), codeNone)
	_ = broken.conn.Close()
	r4 := dialRaw(t, s)
	wantCode(t, "rejoin of 4 again", r4.rejoin(id(4), oldEpoch), codeNone)
	r4.send(&message{Kind: kindRestore, ID: 2, Members: []Identifier{id(2), id(4)}})
	wantCode(t, "restore of 4", r4.reply(2), codeNone)
	r4.send(&message{Kind: kindResume, ID: 3, LastSeq: 8, JoinSeq: 11, NextNum: 5})
	rep4, evs4 := r4.untilReply(3)
	wantCode(t, "resume of 4", rep4, codeNone)
	rep2, evs2 := r2.untilReply(4)
	wantCode(t, "resume of 2", rep2, codeNone)

	// 2 had seen up to seq 10, so it hears that 4 (seq 11) joined; 4 had
	// seen up to 8, so it hears of 2 (seq 3: no). Both hear that 6 left.
	want2 := fmt.Sprint([]Event{{Seq: 11, Type: Joined, Member: id(4)}, {Seq: 12, Type: Left, Member: id(6)}})
	if got := fmt.Sprint(evs2); got != want2 {
		t.Fatalf("member 2 heard %s, want %s", got, want2)
	}
	if got, want := fmt.Sprint(evs4), fmt.Sprint([]Event{{Seq: 12, Type: Left, Member: id(6)}}); got != want {
		t.Fatalf("member 4 heard %s, want %s", got, want)
	}

	// The pool carries on with what member 2 restored.
	r4.send(&message{Kind: kindSequence, ID: 4, Name: "s"})
	if rep := r4.reply(4); rep.Code != codeNone || rep.Value != 7 {
		t.Fatalf("sequence after the rebuild: %+v", rep)
	}
	r4.send(&message{Kind: kindElect, ID: 5, Name: "e"})
	if rep := r4.reply(5); rep.Code != codeNone || *rep.Member != id(2) {
		t.Fatalf("elect after the rebuild: %+v", rep)
	}
	r4.send(&message{Kind: kindLookup, ID: 6, Name: "n"})
	if rep := r4.reply(6); rep.Code != codeNone || *rep.Member != id(2) || rep.Port != "port" {
		t.Fatalf("lookup after the rebuild: %+v", rep)
	}
	if got := dialRaw(t, s).join("q"); got.ID != "7" {
		t.Fatalf("newcomer after the rebuild is %v, want number 7", got)
	}
	wantCode(t, "late rejoin", dialRaw(t, s).rejoin(id(3), oldEpoch), codeNotMember)
	if st := s.Stats(); st.Recovering != 0 || st.Members != 3 {
		t.Fatalf("stats after the rebuild: %v", st)
	}
}

// A pool being rebuilt that everybody back in leaves again (their
// connections break) is forgotten; the next one back starts anew.
func TestRebuildAbandoned(t *testing.T) {
	s := internalServer(t, WithRestartable(true), WithRecoveryGrace(time.Hour))
	r := dialRaw(t, s)
	wantCode(t, "rejoin", r.rejoin(Identifier{Pool: "a", ID: "0"}, 1), codeNone)
	r.send(&message{Kind: kindRestore, ID: 2, Members: []Identifier{{Pool: "a", ID: "1"}}, Won: []string{"w"}})
	wantCode(t, "restore", r.reply(2), codeNone)
	_ = r.conn.Close()
	waitFor(t, "pool forgotten", func() bool { st := s.Stats(); return st.Pools == 0 && st.Recovering == 0 })
	wantCode(t, "rejoin anew", dialRaw(t, s).rejoin(Identifier{Pool: "a", ID: "1"}, 1), codeNone)
}

// internalServerAt is internalServer on a given address.
func internalServerAt(t *testing.T, addr string, opts ...ServerOption) *Server {
	t.Helper()
	opts = append([]ServerOption{WithServerLogger(zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))}, opts...)
	s, err := StartEmbedded(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// startRestartable starts a restartable server on addr for the internal
// tests.
func startRestartable(t *testing.T, addr string, opts ...ServerOption) *Server {
	t.Helper()
	return internalServerAt(t, addr, append([]ServerOption{WithRestartable(true)}, opts...)...)
}

func joinInternal(t *testing.T, ctx context.Context, addr, pool string, opts ...Option) *Client {
	t.Helper()
	c, err := Join(ctx, addr, pool, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func waitEventOf(t *testing.T, c *Client, what string, match func(Event) bool) Event {
	t.Helper()
	deadline := time.After(internalTimeout)
	for {
		select {
		case ev, ok := <-c.Events():
			if !ok {
				t.Fatalf("%v: events closed while waiting for %s (%v)", c.Identity(), what, c.Err())
			}
			if match(ev) {
				return ev
			}
		case <-deadline:
			t.Fatalf("%v: no %s", c.Identity(), what)
		}
	}
}

func lostEvent(prefix string) func(Event) bool {
	return func(ev Event) bool { return ev.Type == RegistryLost && strings.HasPrefix(ev.Name, prefix) }
}

// A member whose connection to a running server breaks is declared dead by
// that server; when it tries to rejoin, the same run refuses it, and it
// gives up with a clear RegistryLost.
func TestRejoinSameRunRefused(t *testing.T) {
	s := startRestartable(t, "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), internalTimeout)
	defer cancel()
	c0 := joinInternal(t, ctx, s.Addr(), "same")
	c1 := joinInternal(t, ctx, s.Addr(), "same")
	c1.mu.Lock()
	conn := c1.sess.conn
	c1.mu.Unlock()
	_ = conn.Close()
	waitEventOf(t, c1, "RegistryLost", lostEvent(LostReconnecting))
	ev := waitEventOf(t, c1, "final RegistryLost", lostEvent(LostForGood))
	if !strings.Contains(ev.Name, "declared it dead") {
		t.Fatalf("final lost event %q does not say why", ev.Name)
	}
	<-c1.Done()
	if !errors.Is(c1.Err(), ErrRegistryLost) || !errors.Is(c1.Err(), ErrNotMember) {
		t.Fatalf("Err() = %v", c1.Err())
	}
	waitEventOf(t, c0, "Died", func(ev Event) bool { return ev.Type == Died && ev.Member == c1.Identity() })
}

// A member that comes back after the pool was rebuilt without it is
// refused and gives up; the others had heard that it died.
func TestLateMemberRefused(t *testing.T) {
	s1 := startRestartable(t, "127.0.0.1:0")
	addr := s1.Addr()
	ctx, cancel := context.WithTimeout(context.Background(), internalTimeout)
	defer cancel()
	release := make(chan struct{})
	c0 := joinInternal(t, ctx, addr, "late")
	c1 := joinInternal(t, ctx, addr, "late", func(c *clientConfig) {
		c.beforeRejoin = func() {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
	})
	// Only a member the others know of can be waited for: make sure the first heard of
	// the second before the server goes (a CI run closed it in between).
	waitEventOf(t, c0, "Joined of the late member", func(ev Event) bool { return ev.Type == Joined && ev.Member == c1.Identity() })
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	startRestartable(t, addr, WithRecoveryGrace(100*time.Millisecond))
	waitEventOf(t, c0, "Died of the late member", func(ev Event) bool { return ev.Type == Died && ev.Member == c1.Identity() })
	waitEventOf(t, c0, "RegistryRestored", func(ev Event) bool { return ev.Type == RegistryRestored })
	close(release)
	ev := waitEventOf(t, c1, "final RegistryLost", lostEvent(LostForGood))
	if !strings.Contains(ev.Name, "carries on without") {
		t.Fatalf("final lost event %q does not say why", ev.Name)
	}
	<-c1.Done()
	if !errors.Is(c1.Err(), ErrRegistryLost) {
		t.Fatalf("Err() = %v", c1.Err())
	}
	if got := joinInternal(t, ctx, addr, "late").Identity().ID; got != "2" {
		t.Fatalf("newcomer got %s, want 2", got)
	}
}

// A member with more to restore than one frame holds (a server with the
// smallest frames) sends it in several restore messages, all of which are
// taken.
func TestRestoreInSeveralFrames(t *testing.T) {
	s1 := startRestartable(t, "127.0.0.1:0", WithMaxFrameSize(MinMaxFrameSize))
	addr := s1.Addr()
	ctx, cancel := context.WithTimeout(context.Background(), internalTimeout)
	defer cancel()
	c := joinInternal(t, ctx, addr, "big")
	const n = 200
	name := func(kind string, i int) string { return fmt.Sprintf("%s-%03d-%s", kind, i, strings.Repeat("x", 30)) }
	for i := range n {
		if _, err := c.Elect(ctx, name("e", i)); err != nil {
			t.Fatal(err)
		}
		if err := c.Bind(ctx, name("b", i), name("p", i)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Sequence(ctx, name("s", i)); err != nil {
			t.Fatal(err)
		}
	}
	if k := len(c.restoreMessages()); k < 4 {
		t.Fatalf("%d restore messages for %d items each in 4 KiB frames", k, n)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := startRestartable(t, addr, WithMaxFrameSize(MinMaxFrameSize))
	waitEventOf(t, c, "RegistryRestored", func(ev Event) bool { return ev.Type == RegistryRestored })
	for i := range n {
		if w, err := c.ElectionResult(ctx, name("e", i)); err != nil || w != c.Identity() {
			t.Fatalf("election %d after the restart: %v, %v", i, w, err)
		}
		if _, port, err := c.Lookup(ctx, name("b", i)); err != nil || port != name("p", i) {
			t.Fatalf("name %d after the restart: %q, %v", i, port, err)
		}
		if v, err := c.Sequence(ctx, name("s", i)); err != nil || v != 1 {
			t.Fatalf("sequence %d after the restart: %d, %v", i, v, err)
		}
	}
	if st := s2.Stats(); st.Rejoins != 1 {
		t.Fatalf("stats: %v", st)
	}
}
