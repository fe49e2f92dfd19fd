package wanemu

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testDev is a device in memory: what the test sends comes out of Read, what the
// emulator writes goes to out.
type testDev struct {
	in   chan []byte
	out  chan []byte
	once sync.Once
	done chan struct{}
}

func newTestDev() *testDev {
	return &testDev{in: make(chan []byte, 1024), out: make(chan []byte, 1024), done: make(chan struct{})}
}

func (d *testDev) Read(b []byte) (int, error) {
	select {
	case p := <-d.in:
		return copy(b, p), nil
	case <-d.done:
		return 0, os.ErrClosed
	}
}

func (d *testDev) Write(b []byte) (int, error) {
	select {
	case <-d.done:
		return 0, os.ErrClosed
	default:
	}
	d.out <- append([]byte(nil), b...)
	return len(b), nil
}

func (d *testDev) Close() error {
	d.once.Do(func() { close(d.done) })
	return nil
}

// packet is an IPv4 header from src to dst with a sequence number as its payload.
func packet(src, dst string, seq byte) []byte {
	p := make([]byte, 21)
	p[0] = 0x45
	s, d := netip.MustParseAddr(src).As4(), netip.MustParseAddr(dst).As4()
	copy(p[12:], s[:])
	copy(p[16:], d[:])
	p[20] = seq
	return p
}

func twoSites(delay time.Duration, loss float64) Config {
	return Config{Device: "t", Sites: []Site{
		{Name: "s1", Prefixes: []netip.Prefix{netip.MustParsePrefix("10.203.1.0/24")}, Delay: delay, Loss: loss},
		{Name: "s2", Prefixes: []netip.Prefix{netip.MustParsePrefix("10.203.2.0/24"), netip.MustParsePrefix("10.204.2.0/24")}, Delay: delay, Loss: loss},
	}}
}

// start starts e on a test device and returns it; the test's cleanup stops it.
func start(t *testing.T, e *Emulator) *testDev {
	t.Helper()
	dev := newTestDev()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- e.Run(ctx, dev) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return dev
}

func recv(t *testing.T, dev *testDev) []byte {
	t.Helper()
	select {
	case p := <-dev.out:
		return p
	case <-time.After(time.Minute):
		t.Fatal("no packet came out within a minute")
		return nil
	}
}

func TestAddrs(t *testing.T) {
	src, dst, ok := addrs(packet("10.203.1.1", "10.204.2.2", 0))
	if !ok || src.String() != "10.203.1.1" || dst.String() != "10.204.2.2" {
		t.Errorf("addrs: %v %v %v", src, dst, ok)
	}
	v6 := make([]byte, 40)
	v6[0] = 0x60
	for _, p := range [][]byte{nil, {0x45}, v6, append([]byte{0x41}, make([]byte, 19)...)} {
		if _, _, ok := addrs(p); ok {
			t.Errorf("addrs(% x) ok; want not IPv4", p)
		}
	}
}

// TestDelayAndOrder: packets between sites come out no earlier than the delay, in order;
// packets within a site or to no site come out at once.
func TestDelayAndOrder(t *testing.T) {
	const delay = 30 * time.Millisecond
	e, err := New(twoSites(delay, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	dev := start(t, e)
	start := time.Now()
	for i := range 50 {
		dev.in <- packet("10.203.1.1", "10.204.2.2", byte(i))
	}
	for i := range 50 {
		p := recv(t, dev)
		if p[20] != byte(i) {
			t.Fatalf("packet %d came out as %d-th", p[20], i)
		}
	}
	if el := time.Since(start); el < delay {
		t.Errorf("packets out after %v; the delay is %v", el, delay)
	}
	dev.in <- packet("10.203.1.1", "10.203.1.2", 7) // within s1
	dev.in <- packet("10.1.1.1", "10.203.1.2", 8)   // from no site
	for _, want := range []byte{7, 8} {
		if p := recv(t, dev); p[20] != want {
			t.Errorf("got packet %d, want %d", p[20], want)
		}
	}
	st := e.Stats()
	if st.Total.Packets != 50 || st.Other != 2 || len(st.Pairs) != 1 || st.Pairs[0].From != "s1" || st.Pairs[0].To != "s2" {
		t.Errorf("stats %+v", st)
	}
}

// TestMeanDelay: a pair's delay is the mean of its sites' delays.
func TestMeanDelay(t *testing.T) {
	cfg := twoSites(0, 0)
	cfg.Sites[1].Delay = 80 * time.Millisecond
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if !e.enqueue(packet("10.203.2.9", "10.203.1.1", 1), now) {
		t.Fatal("not queued")
	}
	due, ok := e.lines[1*2+0].next()
	if !ok || due.Sub(now) != 40*time.Millisecond {
		t.Errorf("due after %v, want 40ms", due.Sub(now))
	}
}

func TestLoss(t *testing.T) {
	e, err := New(twoSites(0, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		e.enqueue(packet("10.203.1.1", "10.203.2.1", byte(i)), time.Now())
	}
	if st := e.Stats(); st.Total.Lost != 100 {
		t.Errorf("loss 1: %d lost of 100", st.Total.Lost)
	}
	if err := e.SetLink(1, 0, 0.2); err != nil {
		t.Fatal(err)
	}
	if err := e.SetLink(2, 0, 0.2); err != nil {
		t.Fatal(err)
	}
	const n = 20000
	for range n {
		e.enqueue(packet("10.203.1.1", "10.203.2.1", 0), time.Now())
		e.lines[1].drain()
	}
	// 20% of 20000: 4000, standard deviation 57; 3000 and 5000 are 17 deviations away.
	if lost := e.Stats().Total.Lost - 100; lost < 3000 || lost > 5000 {
		t.Errorf("loss 0.2: %d lost of %d", lost, n)
	}
}

// TestBound: a pair holds at most QueueBytes; what is beyond is counted and dropped.
func TestBound(t *testing.T) {
	cfg := twoSites(time.Hour/1000, 0)
	cfg.QueueBytes = 100
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		e.enqueue(packet("10.203.1.1", "10.203.2.1", byte(i)), time.Now())
	}
	st := e.Stats()
	if st.Pairs[0].Queued != 84 || st.Total.Overflow != 6 {
		t.Errorf("queued %d bytes, %d dropped; want 84 (4 packets) and 6", st.Pairs[0].Queued, st.Total.Overflow)
	}
	// The bound over all pairs: 150 bytes, of which s1->s2 holds 84.
	cfg.TotalBytes = 150
	if e, err = New(cfg, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		e.enqueue(packet("10.203.1.1", "10.203.2.1", byte(i)), time.Now())
		e.enqueue(packet("10.203.2.1", "10.203.1.1", byte(i)), time.Now())
	}
	if st := e.Stats(); st.Total.Overflow != 1 || e.held != 147 {
		t.Errorf("bound over all pairs: %d dropped, %d bytes held; want 1 and 147", st.Total.Overflow, e.held)
	}
	if err := e.SetDown(1, true); err != nil || e.held != 0 {
		t.Errorf("after down: %d bytes held, %v", e.held, err)
	}
}

// TestDown: a site whose link is down passes nothing; what its pairs held is dropped.
func TestDown(t *testing.T) {
	e, err := New(twoSites(time.Second, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	e.enqueue(packet("10.203.1.1", "10.203.2.1", 0), time.Now())
	if err := e.SetDown(2, true); err != nil {
		t.Fatal(err)
	}
	e.enqueue(packet("10.203.2.1", "10.203.1.1", 1), time.Now())
	st := e.Stats()
	if st.Total.Down != 2 || st.Pairs[0].Queued != 0 {
		t.Errorf("down: %+v", st)
	}
	if err := e.SetDown(2, false); err != nil {
		t.Fatal(err)
	}
	e.enqueue(packet("10.203.2.1", "10.203.1.1", 2), time.Now())
	if _, ok := e.lines[2].next(); !ok {
		t.Error("up again: the packet was not queued")
	}
	if err := e.SetDown(3, true); !errors.Is(err, ErrInvalid) {
		t.Errorf("site 3 of 2: %v, want ErrInvalid", err)
	}
}

// TestLoweredDelayKeepsOrder: after the delay is lowered, a later packet due earlier still
// leaves after the ones before it.
func TestLoweredDelayKeepsOrder(t *testing.T) {
	l := line{limit: 1 << 20}
	now := time.Now()
	l.push([]byte{1}, now.Add(time.Second))
	l.push([]byte{2}, now)
	if out := l.popDue(now, nil); len(out) != 0 {
		t.Fatalf("popped %v before the first was due", out)
	}
	out := l.popDue(now.Add(time.Second), nil)
	if len(out) != 2 || out[0].pkt[0] != 1 || out[1].pkt[0] != 2 {
		t.Errorf("popped %v, want [1] [2]", out)
	}
}

func TestInvalid(t *testing.T) {
	bad := []Config{
		{},
		twoSites(-time.Second, 0),
		twoSites(time.Hour, 0),
		twoSites(0, 1.5),
		{Sites: []Site{{Prefixes: []netip.Prefix{netip.MustParsePrefix("fd00::/64")}}}},
	}
	for _, c := range bad {
		if _, err := New(c, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("New(%+v): %v, want ErrInvalid", c, err)
		}
	}
}

// TestControl sets a link and reads the counters through the control socket.
func TestControl(t *testing.T) {
	e, err := New(twoSites(time.Millisecond, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.sock")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- e.Serve(ctx, path) }()
	defer func() {
		cancel()
		if err := <-errc; err != nil {
			t.Error(err)
		}
	}()
	var rep Reply
	deadline := time.Now().Add(time.Minute)
	for {
		if rep, err = Control(ctx, path, Request{Op: "set", Site: 2, Delay: 7 * time.Millisecond, Loss: 0.25}); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond) // the socket is not bound yet
	}
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Stats.Sites[1]; s.Delay != 7*time.Millisecond || s.Loss != 0.25 {
		t.Errorf("site 2 after set: %+v", s)
	}
	if _, err := Control(ctx, path, Request{Op: "down", Site: 1}); err != nil {
		t.Fatal(err)
	}
	if rep, err := Control(ctx, path, Request{Op: "stats"}); err != nil || !rep.Stats.Sites[0].Down {
		t.Errorf("stats after down: %+v, %v", rep.Stats.Sites, err)
	}
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("not json\n")); err != nil {
		t.Fatal(err)
	}
	var garbled Reply
	if err := json.NewDecoder(conn).Decode(&garbled); err != nil || !strings.Contains(garbled.Error, "bad request") {
		t.Errorf("a request that is not JSON: %+v, %v", garbled.Error, err)
	}
	for _, req := range []Request{{Op: "set", Site: 9}, {Op: "nonesuch"}, {Op: "set", Site: 1, Loss: 2}} {
		if _, err := Control(ctx, path, req); !errors.Is(err, ErrControl) {
			t.Errorf("%+v: %v, want ErrControl", req, err)
		}
	}
}

// TestMainFails: the program refuses a missing configuration, a bad one, and a TUN device
// it cannot attach to, with an exit code and a reason.
func TestMainFails(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"sites": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	noDev := filepath.Join(dir, "nodev.json")
	if err := os.WriteFile(noDev, []byte(`{"device": "ibis-nonesuch0", "sites": [{"name": "s1"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{nil, {"-config", filepath.Join(dir, "none.json")}, {"-config", bad}, {"-config", noDev}} {
		var out strings.Builder
		if code := Main(args, &out); code == 0 || out.Len() == 0 {
			t.Errorf("Main(%q): exit %d, %q; want a failure and why", args, code, out.String())
		}
	}
}
