package core

import (
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ibisgo/ibis/internal/hub"
)

// hubWarnPatience bounds the waits of these tests; they wait for events, never sleep.
const hubWarnPatience = time.Minute

// scriptedListener hands the connections it accepts to its caller (a hub server's
// Serve) when pass says so for that connection (numbered from 1); it closes the others
// and reports each on refused, so that a test can count a member's failed attempts.
type scriptedListener struct {
	net.Listener
	pass    func(n int) bool
	passed  chan net.Conn // the first connection passed on, for the test to cut
	refused chan int      // the numbers of the connections closed (never blocks Accept)
	n       int
}

func (l *scriptedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.n++
		if l.pass(l.n) {
			select {
			case l.passed <- c:
			default:
			}
			return c, nil
		}
		_ = c.Close()
		select {
		case l.refused <- l.n:
		default: // more attempts than any test waits for
		}
	}
}

func newScriptedListener(t *testing.T, pass func(int) bool) *scriptedListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &scriptedListener{Listener: ln, pass: pass, passed: make(chan net.Conn, 1), refused: make(chan int, 64)}
	t.Cleanup(func() { _ = ln.Close() })
	return l
}

// runKeepHub runs keepHub for the hub at addr on an instance of its own, logging to an
// observer at Debug; stop ends the instance and waits for keepHub to return.
func runKeepHub(t *testing.T, addr string) (first chan *hub.Member, logs *observer.ObservedLogs, stop func()) {
	t.Helper()
	obs, logs := observer.New(zapcore.DebugLevel)
	in := &Instance{done: make(chan struct{})}
	first = make(chan *hub.Member, 1)
	reg := hub.Registration{Pool: "p", Key: "0123456789abcdef"}
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		in.keepHub(addr, reg, first, zap.New(obs))
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			close(in.done)
			select {
			case <-returned:
			case <-time.After(hubWarnPatience):
				t.Fatal("keepHub did not return after its instance ended")
			}
		})
	}
	t.Cleanup(stop)
	return first, logs, stop
}

// waitRefused waits until the listener has refused its connection number n.
func waitRefused(t *testing.T, l *scriptedListener, n int) {
	t.Helper()
	deadline := time.After(hubWarnPatience)
	for {
		select {
		case got := <-l.refused:
			if got >= n {
				return
			}
		case <-deadline:
			t.Fatalf("the member did not try a registration %d times", n)
		}
	}
}

// A hub that cannot be registered at (here: something that hangs up at once) is worth
// one warning that names it, says why and what it costs; the retries that follow are
// not, however many there are.
func TestKeepHubWarnsOnceAboutAHubItCannotRegisterAt(t *testing.T) {
	l := newScriptedListener(t, func(int) bool { return false })
	accepting := make(chan struct{})
	go func() {
		defer close(accepting)
		_, _ = l.Accept() // returns when the listener closes
	}()
	t.Cleanup(func() { _ = l.Close(); <-accepting })
	addr := l.Addr().String()
	first, logs, stop := runKeepHub(t, addr)
	if m := <-first; m != nil {
		t.Fatal("registered at a hub that hangs up")
	}
	// The fourth attempt begins after the third has failed and been logged.
	waitRefused(t, l, 4)
	stop()
	warns := logs.FilterLevelExact(zapcore.WarnLevel).All()
	if len(warns) != 1 {
		t.Fatalf("%d warnings after 3 or more failed registrations, want 1: %v", len(warns), warns)
	}
	w := warns[0]
	ctx := w.ContextMap()
	if ctx["hub"] != addr || ctx["error"] == nil || !containsAll(w.Message, "relayed", "will not work") {
		t.Errorf("warning %q %v: want one that names hub %s, its error, and that relayed connections will not work", w.Message, ctx, addr)
	}
	if n := logs.FilterMessage("registering at a hub").FilterField(zap.String("hub", addr)).Len(); n < 2 {
		t.Errorf("%d retries logged at Info, want at least 2", n)
	}
}

// A hub that fails first and then lets the member register is warned about once, its
// registration after all is logged, and losing it later is no warning: the member
// registers again as it goes.
func TestKeepHubQuietAfterARegistration(t *testing.T) {
	l := newScriptedListener(t, func(n int) bool { return n == 2 })
	s := hub.NewServer()
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	t.Cleanup(func() {
		_ = s.Close()
		if err := <-served; !errors.Is(err, hub.ErrClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	addr := l.Addr().String()
	first, logs, stop := runKeepHub(t, addr)
	if m := <-first; m != nil {
		t.Fatal("the first registration succeeded, want it refused")
	}
	var conn net.Conn
	select {
	case conn = <-l.passed:
	case <-time.After(hubWarnPatience):
		t.Fatal("the member did not try again")
	}
	deadline := time.Now().Add(hubWarnPatience)
	for logs.FilterMessage("registered at a hub").Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the member never registered")
		}
		time.Sleep(time.Millisecond)
	}
	_ = conn.Close() // the hub goes away under the member; it can register no more
	waitRefused(t, l, 4)
	stop()
	if warns := logs.FilterLevelExact(zapcore.WarnLevel).All(); len(warns) != 1 || warns[0].ContextMap()["hub"] != addr {
		t.Fatalf("warnings %v; want one, about the first failure at %s", warns, addr)
	}
	if logs.FilterMessage("registered at a hub after all").Len() != 1 {
		t.Error("no log that the member registered after the warning")
	}
	if n := logs.FilterMessage("registering at a hub").Len(); n < 1 {
		t.Errorf("%d failures logged at Info after the hub went away, want at least 1", n)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
