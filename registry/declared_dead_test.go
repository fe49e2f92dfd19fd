package registry_test

import (
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibisgo/ibis/registry"
)

// freezer forwards TCP connections to a target and can stop forwarding
// for a while, in both directions, as a stopped process or a cut link
// would: bytes wait (in the kernel and in the freezer) until it thaws.
type freezer struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	frozen bool
	thawed *sync.Cond
	conns  []net.Conn
	wg     sync.WaitGroup
}

func startFreezer(t *testing.T, target string) *freezer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{ln: ln, target: target}
	f.thawed = sync.NewCond(&f.mu)
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(f.close)
	return f
}

func (f *freezer) addr() string { return f.ln.Addr().String() }

func (f *freezer) accept() {
	defer f.wg.Done()
	for {
		in, err := f.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", f.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		f.mu.Lock()
		f.conns = append(f.conns, in, out)
		f.mu.Unlock()
		f.wg.Add(2)
		go f.pipe(in, out)
		go f.pipe(out, in)
	}
}

// pipe copies from src to dst, holding each chunk while frozen; a
// finished direction closes both connections.
func (f *freezer) pipe(src, dst net.Conn) {
	defer f.wg.Done()
	defer func() { _ = src.Close(); _ = dst.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		f.mu.Lock()
		for f.frozen {
			f.thawed.Wait()
		}
		f.mu.Unlock()
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (f *freezer) freeze() {
	f.mu.Lock()
	f.frozen = true
	f.mu.Unlock()
}

func (f *freezer) thaw() {
	f.mu.Lock()
	f.frozen = false
	f.thawed.Broadcast()
	f.mu.Unlock()
}

func (f *freezer) close() {
	_ = f.ln.Close()
	f.thaw()
	f.mu.Lock()
	for _, c := range f.conns {
		_ = c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// A member that sends nothing for the death timeout (its link frozen, as
// if its process were stopped) is declared dead: the others hear Died at
// once, and the member, once its link thaws, learns it from the server's
// last message and ends with ErrDeclaredDead and a last RegistryLost
// event that says so, rather than trying to go on or to rejoin.
func TestDeclaredDeadMemberLearnsIt(t *testing.T) {
	s := startServer(t, registry.WithHeartbeatInterval(50*time.Millisecond), registry.WithDeathTimeout(500*time.Millisecond))
	other := join(t, s, "dd")
	f := startFreezer(t, s.Addr())
	frozen := joinAt(t, f.addr(), "dd")
	waitEvent(t, other, "Joined of the frozen member", isEvent(registry.Joined, frozen.Identity()))

	f.freeze()
	waitEvent(t, other, "Died of the frozen member", isEvent(registry.Died, frozen.Identity()))
	f.thaw()

	ev := waitEvent(t, frozen, "its last RegistryLost", func(ev registry.Event) bool { return ev.Type == registry.RegistryLost })
	if !strings.HasPrefix(ev.Name, registry.LostDeclaredDead) || !strings.HasPrefix(ev.Name, registry.LostForGood) {
		t.Fatalf("last event %q, want one beginning %q", ev.Name, registry.LostDeclaredDead)
	}
	select {
	case <-frozen.Done():
	case <-time.After(testTimeout):
		t.Fatal("the member declared dead did not end")
	}
	err := frozen.Err()
	if !errors.Is(err, registry.ErrDeclaredDead) || !errors.Is(err, registry.ErrRegistryLost) {
		t.Fatalf("Err after being declared dead: %v", err)
	}
	if _, ok := <-frozen.Events(); ok {
		t.Fatal("an event after the last RegistryLost")
	}
	if got := other.Members(); len(got) != 1 {
		t.Fatalf("members after the death: %v", got)
	}
}

// Close while the server does not answer (its link frozen, as if the
// registry process were stopped) waits a short time for the leave to be
// confirmed, then ends the client anyway and returns nil: the member's
// work is done, and a program must not fail for the registry's pause.
func TestCloseWithStoppedServerReturnsNil(t *testing.T) {
	s := startServer(t)
	f := startFreezer(t, s.Addr())
	c, err := registry.Join(testContext(t), f.addr(), "cs", registry.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	f.freeze()
	defer f.thaw()
	if err := c.Close(); err != nil {
		t.Fatalf("close with the server stopped: %v", err)
	}
	if !errors.Is(c.Err(), registry.ErrClosed) {
		t.Fatalf("Err after close: %v", c.Err())
	}
}
