package registry

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// Tests of a member that lists several registry front ends: it joins at
// one that answers, and moves to another when its own is closed, answers
// that it cannot reach its store, or goes silent. No test times anything:
// each waits for the event or state it needs, with internalTimeout as the
// bound.

// withFirstAddr makes Join begin at front end i of its list.
func withFirstAddr(i int) Option { return func(c *clientConfig) { c.firstAddr = i } }

// deadAddr returns an address on which nothing listens (a listener the
// test closed).
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// storeless plays a front end that is up but has lost its store: it runs
// the pool check and answers every join and rejoin with codeUnavailable,
// over the real wire protocol. It reports the joins it answered on joins
// (rejoins on rejoins), as many as their buffers hold.
type storeless struct {
	ln       net.Listener
	joins    chan struct{}
	rejoins  chan struct{}
	mu       sync.Mutex
	conns    []net.Conn
	wg       sync.WaitGroup
	answered atomic.Int64
}

func startStoreless(t *testing.T) *storeless {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &storeless{ln: ln, joins: make(chan struct{}, 1024), rejoins: make(chan struct{}, 1024)}
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(f.close)
	return f
}

func (f *storeless) addr() string { return f.ln.Addr().String() }

func (f *storeless) accept() {
	defer f.wg.Done()
	for {
		conn, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns = append(f.conns, conn)
		f.mu.Unlock()
		f.wg.Add(1)
		go f.serve(conn)
	}
}

func (f *storeless) serve(conn net.Conn) {
	defer f.wg.Done()
	defer func() { _ = conn.Close() }()
	if _, err := poolauth.Accept(conn, func(string) (poolauth.Secret, bool) { return poolauth.Secret{}, true }); err != nil {
		return
	}
	br := bufio.NewReader(conn)
	for {
		body, err := readFrame(br, nil, DefaultMaxFrameSize)
		if err != nil {
			return
		}
		m, err := decodeMessage(body)
		if err != nil || m.Kind != kindJoin {
			continue
		}
		frame, err := encodeFrame(&message{Kind: kindReply, ID: m.ID, Code: codeUnavailable,
			Error: "registry front end cannot reach its store (test)"})
		if err != nil {
			return
		}
		// Counted before the reply is written: the client may move on, and the test
		// look at the count, as soon as the reply is out.
		f.answered.Add(1)
		if _, err := conn.Write(frame); err != nil {
			return
		}
		report := f.joins
		if m.Rejoin != nil {
			report = f.rejoins
		}
		select {
		case report <- struct{}{}:
		default: // reported often enough
		}
	}
}

func (f *storeless) close() {
	_ = f.ln.Close()
	f.mu.Lock()
	for _, c := range f.conns {
		_ = c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// muteProxy forwards TCP connections to a target until mute (or hold) is called;
// from then on it drops what arrives in both directions but keeps the
// connections open, as a front end that went silent would.
type muteProxy struct {
	ln     net.Listener
	target string
	muted  atomic.Bool
	held   atomic.Bool // the member's direction only
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

func startMuteProxy(t *testing.T, target string) *muteProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &muteProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *muteProxy) addr() string { return p.ln.Addr().String() }

func (p *muteProxy) mute() { p.muted.Store(true) }

// hold drops what the member writes from now on, while what the front end writes, and
// its closing of the connection, still reach the member: a front end that runs and
// applies what the others record, but takes no requests.
func (p *muteProxy) hold() { p.held.Store(true) }

func (p *muteProxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(in, out, &p.held)
		go p.pipe(out, in, nil)
	}
}

// pipe copies src to dst while not muted, nor held where held is given; a
// finished direction closes both connections.
func (p *muteProxy) pipe(src, dst net.Conn, held *atomic.Bool) {
	defer p.wg.Done()
	defer func() { _ = src.Close(); _ = dst.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.muted.Load() && (held == nil || !held.Load()) {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *muteProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// receive waits for a report on ch.
func receive(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(internalTimeout):
		t.Fatalf("no %s within %v", what, internalTimeout)
	}
}

// Join moves on from a front end that cannot be dialled to the next.
func TestJoinSkipsDeadFrontEnd(t *testing.T) {
	live := startRestartable(t, "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), internalTimeout)
	defer cancel()
	c := joinInternal(t, ctx, deadAddr(t)+", "+live.Addr(), "skip", withFirstAddr(0))
	if c.Addr() != live.Addr() {
		t.Fatalf("joined at %s, want the live front end %s", c.Addr(), live.Addr())
	}
	if m := c.Members(); len(m) != 1 || m[0] != c.Identity() {
		t.Fatalf("members %v", m)
	}
	if _, err := c.Sequence(ctx, "n"); err != nil {
		t.Fatal(err)
	}
}

// Join moves on from a front end that answers it cannot reach its store to
// the next.
func TestJoinSkipsStorelessFrontEnd(t *testing.T) {
	f := startStoreless(t)
	live := startRestartable(t, "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), internalTimeout)
	defer cancel()
	c := joinInternal(t, ctx, f.addr()+","+live.Addr(), "storeless", withFirstAddr(0))
	if c.Addr() != live.Addr() {
		t.Fatalf("joined at %s, want %s", c.Addr(), live.Addr())
	}
	if f.answered.Load() == 0 {
		t.Fatal("the storeless front end was never asked")
	}
}

// With a single front end that cannot reach its store, Join keeps asking
// it until ctx ends, and then says what the front end answered.
func TestJoinWaitsForStore(t *testing.T) {
	f := startStoreless(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		c, err := Join(ctx, f.addr(), "wait")
		if c != nil {
			_ = c.Close()
		}
		done <- err
	}()
	receive(t, f.joins, "first join")
	receive(t, f.joins, "second join")
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(internalTimeout):
		t.Fatal("Join did not end with its context")
	}
	for _, want := range []error{ErrUnavailable, ErrRegistryLost, context.Canceled} {
		if !errors.Is(err, want) {
			t.Errorf("Join error %v does not wrap %v", err, want)
		}
	}
}

// When its front end is closed, a member rejoins at the next front end in
// its list with its identity, skipping one that cannot reach its store:
// the program hears RegistryLost, then RegistryRestored, and the pool goes
// on there (rebuilt from its returning members, the front ends here being
// independent servers) with the member's election.
func TestRejoinMovesToNextFrontEnd(t *testing.T) {
	a := startRestartable(t, "127.0.0.1:0")
	u := startStoreless(t)
	b := startRestartable(t, "127.0.0.1:0")
	list := strings.Join([]string{a.Addr(), u.addr(), b.Addr()}, ",")
	ctx, cancel := context.WithTimeout(context.Background(), internalTimeout)
	defer cancel()
	c0 := joinInternal(t, ctx, list, "move", withFirstAddr(0))
	c1 := joinInternal(t, ctx, list, "move", withFirstAddr(0))
	for _, c := range []*Client{c0, c1} {
		if c.Addr() != a.Addr() {
			t.Fatalf("%v joined at %s, want %s", c.Identity(), c.Addr(), a.Addr())
		}
	}
	waitEventOf(t, c0, "Joined of the second", func(ev Event) bool { return ev.Type == Joined && ev.Member == c1.Identity() })
	if w, err := c0.Elect(ctx, "boss"); err != nil || w != c0.Identity() {
		t.Fatalf("elect: %v, %v", w, err)
	}

	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Client{c0, c1} {
		waitEventOf(t, c, "RegistryLost", lostEvent(LostReconnecting))
		waitEventOf(t, c, "RegistryRestored", func(ev Event) bool { return ev.Type == RegistryRestored })
		if c.Addr() != b.Addr() {
			t.Fatalf("%v rejoined at %s, want %s", c.Identity(), c.Addr(), b.Addr())
		}
		if m := c.Members(); len(m) != 2 || m[0] != c0.Identity() || m[1] != c1.Identity() {
			t.Fatalf("%v: members %v after moving", c.Identity(), m)
		}
	}
	receive(t, u.rejoins, "rejoin at the storeless front end")
	if w, err := c1.ElectionResult(ctx, "boss"); err != nil || w != c0.Identity() {
		t.Fatalf("election result after moving: %v, %v", w, err)
	}
	c2 := joinInternal(t, ctx, b.Addr(), "move")
	for _, c := range []*Client{c0, c1} {
		waitEventOf(t, c, "Joined of a newcomer", func(ev Event) bool { return ev.Type == Joined && ev.Member == c2.Identity() })
	}
}

// A member whose front end goes silent (its connection open, nothing
// coming) moves to the next front end in its list: it takes the front end
// for lost after half the death timeout, not twice it as with a single
// front end.
func TestSilentFrontEndIsLeft(t *testing.T) {
	a := startRestartable(t, "127.0.0.1:0", WithHeartbeatInterval(50*time.Millisecond), WithDeathTimeout(time.Second))
	b := startRestartable(t, "127.0.0.1:0")
	p := startMuteProxy(t, a.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), internalTimeout)
	defer cancel()
	c := joinInternal(t, ctx, p.addr()+","+b.Addr(), "silent", withFirstAddr(0))
	if c.Addr() != p.addr() {
		t.Fatalf("joined at %s, want %s", c.Addr(), p.addr())
	}
	c.mu.Lock()
	lost := time.Duration(c.sess.readTimeout.Load())
	c.mu.Unlock()
	if lost != 500*time.Millisecond {
		t.Fatalf("a silent front end is taken for lost after %v, want half the death timeout", lost)
	}
	single := joinInternal(t, ctx, a.Addr(), "single")
	single.mu.Lock()
	lost = time.Duration(single.sess.readTimeout.Load())
	single.mu.Unlock()
	if lost != 2*time.Second {
		t.Fatalf("a member with one front end takes it for lost after %v of silence, want twice the death timeout", lost)
	}

	p.mute()
	ev := waitEventOf(t, c, "RegistryLost", lostEvent(LostReconnecting))
	if !strings.Contains(ev.Name, "nothing heard from the server") {
		t.Fatalf("lost for %q, want silence", ev.Name)
	}
	waitEventOf(t, c, "RegistryRestored", func(ev Event) bool { return ev.Type == RegistryRestored })
	if c.Addr() != b.Addr() {
		t.Fatalf("rejoined at %s, want %s", c.Addr(), b.Addr())
	}
	if _, err := c.Sequence(ctx, "n"); err != nil {
		t.Fatal(err)
	}
}
