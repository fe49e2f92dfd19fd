package registry_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/registry"
)

func TestServerGoneGivesRegistryLost(t *testing.T) {
	s, err := registry.StartEmbedded("127.0.0.1:0", registry.WithServerLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	c0 := join(t, s, "lost")
	c1 := join(t, s, "lost")
	lookup := make(chan error, 1)
	go func() {
		_, _, err := c0.Lookup(ctx, "never")
		lookup <- err
	}()
	wait := make(chan error, 1)
	go func() { wait <- c1.WaitUntilTerminated(ctx) }()
	eventually(t, "lookup waiting", func() bool { return s.Stats().Waiting == 1 })

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mustErrorIs(t, <-lookup, registry.ErrRegistryLost)
	mustErrorIs(t, <-wait, registry.ErrRegistryLost)
	for _, c := range []*registry.Client{c0, c1} {
		<-c.Done()
		mustErrorIs(t, c.Err(), registry.ErrRegistryLost)
		_, err := c.Sequence(ctx, "x")
		mustErrorIs(t, err, registry.ErrRegistryLost)
		_, err = c.Elect(ctx, "x")
		mustErrorIs(t, err, registry.ErrRegistryLost)
		// The events received before the loss are still delivered, then
		// the channel closes.
		n := 0
		for range c.Events() {
			n++
		}
		if n == 0 {
			t.Fatalf("%v: no events delivered before the channel closed", c.Identity())
		}
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ln); !errors.Is(err, registry.ErrClosed) {
		t.Fatalf("serve after close: %v", err)
	}
	if err := s.Serve(nil); !errors.Is(err, registry.ErrInvalid) {
		t.Fatalf("serve of a nil listener: %v", err)
	}
}

// freeAddr returns a loopback address the kernel picked, no longer in use.
func freeAddr(t *testing.T) string {
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

func TestJoinWaitsForServer(t *testing.T) {
	addr := freeAddr(t)
	ctx := testContext(t)
	type result struct {
		c   *registry.Client
		err error
	}
	res := make(chan result, 1)
	go func() {
		c, err := registry.Join(ctx, addr, "late")
		res <- result{c, err}
	}()
	s, err := registry.StartEmbedded(addr)
	if err != nil {
		t.Fatalf("start server on %s: %v", addr, err)
	}
	defer s.Close()
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	if err := r.c.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestJoinGivesUp(t *testing.T) {
	addr := freeAddr(t)
	_, err := registry.Join(testContext(t), addr, "nobody", registry.WithDialTimeout(50*time.Millisecond))
	mustErrorIs(t, err, context.DeadlineExceeded)
	if !strings.Contains(err.Error(), addr) {
		t.Fatalf("error does not name the address: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = registry.Join(ctx, addr, "nobody")
	mustErrorIs(t, err, context.Canceled)
	_, err = registry.Join(testContext(t), "no-port", "p")
	if err == nil {
		t.Fatal("join with a malformed address succeeded")
	}
	_, err = registry.Join(testContext(t), addr, "")
	mustErrorIs(t, err, registry.ErrInvalid)
	_, err = registry.Join(testContext(t), addr, "p", registry.WithPoolSize(-1))
	mustErrorIs(t, err, registry.ErrInvalid)
}

// TestGarbageClosesOnlyThatConnection sends malformed input on raw
// connections: each is closed, and the pool's members carry on.
func TestGarbageClosesOnlyThatConnection(t *testing.T) {
	s := startServer(t)
	ctx := testContext(t)
	c0 := join(t, s, "g")
	header := func(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }
	cases := map[string][]byte{
		"http request":   []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		"absurd length":  header(0xffffffff),
		"empty frame":    header(0),
		"not msgpack":    append(header(3), 0xc1, 0xc1, 0xc1),
		"unknown kind":   append(header(4), 0x81, 0xa1, 'k', 0x7f),
		"truncated body": append(header(100), 1, 2, 3),
	}
	for name, input := range cases {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := poolauth.Dial(conn, "g", poolauth.Secret{}); err != nil { // garbage after the pool check
				t.Fatal(err)
			}
			if _, err := conn.Write(input); err != nil {
				t.Fatal(err)
			}
			if name == "truncated body" {
				if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
					t.Fatal(err)
				}
			}
			if err := conn.SetReadDeadline(time.Now().Add(testTimeout)); err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, conn); err != nil {
				t.Fatalf("server did not close the connection: %v", err)
			}
			if _, err := c0.Sequence(ctx, "alive"); err != nil {
				t.Fatalf("member broken by another connection's garbage: %v", err)
			}
		})
	}
	c1 := join(t, s, "g")
	if len(c1.Members()) != 2 {
		t.Fatalf("members after garbage: %v", c1.Members())
	}
	eventually(t, "garbage connections gone", func() bool { return s.Stats().Connections == 2 })
}

// TestCrossProcessKilledMemberDies runs a member in a child process (this
// test binary in child mode), kills it with SIGKILL, and waits for the
// others to hear that it died.
func TestCrossProcessKilledMemberDies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	s := startServer(t, registry.WithHeartbeatInterval(time.Second))
	c0 := join(t, s, "xproc")
	c1 := join(t, s, "xproc")

	c, err := selfexec.Start(context.Background(), []string{selfexec.NoTests}, selfexec.WithStdoutPipe(),
		selfexec.WithEnv(childAddrEnv+"="+s.Addr(), childPoolEnv+"=xproc"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	line, err := bufio.NewReader(c.StdoutPipe()).ReadString('\n')
	if err != nil {
		t.Fatalf("child did not report its join: %v (stderr: %s)", err, c.Stderr())
	}
	if !strings.HasPrefix(line, "joined xproc/2") {
		t.Fatalf("child says %q", line)
	}
	child := waitEvent(t, c0, "child Joined", func(ev registry.Event) bool {
		return ev.Type == registry.Joined && ev.Member.Tag == "child"
	}).Member

	if err := c.Signal(os.Kill); err != nil { // SIGKILL
		t.Fatal(err)
	}
	for _, c := range []*registry.Client{c0, c1} {
		waitEvent(t, c, "Died", isEvent(registry.Died, child))
		for _, m := range c.Members() {
			if m == child {
				t.Fatalf("%v still lists the dead child", c.Identity())
			}
		}
	}
	if st := s.Stats(); st.Deaths != 1 {
		t.Fatalf("stats after the kill: %v", st)
	}
}

// TestSlowHandlerDoesNotBlockReplies blocks the event handler while the
// client makes calls: replies must keep flowing, and events arrive later
// in order.
func TestSlowHandlerDoesNotBlockReplies(t *testing.T) {
	s := startServer(t)
	ctx := testContext(t)
	release := make(chan struct{})
	var mu sync.Mutex
	var seen []registry.Event
	c0 := join(t, s, "slow", registry.WithEventHandler(func(ev registry.Event) {
		<-release
		mu.Lock()
		seen = append(seen, ev)
		mu.Unlock()
	}))
	const others = 5
	for range others {
		join(t, s, "slow")
	}
	for i := range 20 {
		if err := c0.Signal(ctx, "ping"); err != nil {
			t.Fatal(err)
		}
		if v, err := c0.Sequence(ctx, "n"); err != nil || v != int64(i) {
			t.Fatalf("sequence %d: %d, %v", i, v, err)
		}
	}
	if n := len(c0.Members()); n != 1+others {
		t.Fatalf("Members() lags behind a blocked handler: %d", n)
	}
	close(release)
	eventually(t, "handler got every event", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 1+others+20
	})
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(seen); i++ {
		if seen[i].Seq <= seen[i-1].Seq {
			t.Fatalf("handler saw seq %d after %d", seen[i].Seq, seen[i-1].Seq)
		}
	}
	select {
	case ev, ok := <-c0.Events():
		if ok {
			t.Fatalf("event %v on the channel although a handler is set", ev)
		}
	default:
	}
}

func TestCloseFromHandler(t *testing.T) {
	s := startServer(t)
	ctx := testContext(t)
	self := make(chan *registry.Client, 1)
	closed := make(chan error, 1)
	c0, err := registry.Join(ctx, s.Addr(), "h", registry.WithEventHandler(func(ev registry.Event) {
		if ev.Type == registry.Signal {
			closed <- (<-self).Close()
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	self <- c0
	c1 := join(t, s, "h")
	if err := c1.Signal(ctx, "quit", c0.Identity()); err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("close from the handler: %v", err)
	}
	<-c0.Done()
	waitEvent(t, c1, "Left", isEvent(registry.Left, c0.Identity()))
	if err := c0.Close(); err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a bytes.Buffer safe for the server's writes and the test's
// reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestEventLogAndStats(t *testing.T) {
	var log syncBuffer
	s := startServer(t, registry.WithEventLog(&log))
	ctx := testContext(t)
	c0 := join(t, s, "log", registry.WithAddress("h:1"))
	c1 := join(t, s, "log")
	if _, err := c0.Elect(ctx, "boss"); err != nil {
		t.Fatal(err)
	}
	if err := c1.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	want := []string{"#1 Joined log/0@h:1", "#2 Joined log/1", `#3 Elected log/0@h:1 "boss"`, "#4 Left log/1"}
	if len(lines) != len(want) {
		t.Fatalf("event log:\n%s", log.String())
	}
	for i, w := range want {
		if !strings.HasSuffix(lines[i], w) {
			t.Fatalf("event log line %d is %q, want it to end in %q", i, lines[i], w)
		}
	}
	st := s.Stats()
	if st.Pools != 1 || st.Members != 1 || st.Events != 4 || st.Joins != 2 || st.Leaves != 1 ||
		st.BytesIn == 0 || st.BytesOut == 0 || st.Accepted != 2 {
		t.Fatalf("stats: %v", st)
	}
	if !strings.Contains(st.String(), "members=1") {
		t.Fatalf("stats string: %s", st)
	}
}
