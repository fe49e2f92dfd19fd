package test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/impl/nio"
	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// What Ibis.Close and Wait promise about the goroutines the instance started, in one
// process with real tcp and nio instances: Close ends the instance and returns without
// waiting for the handlers that run at that moment, so that any handler may call it; a
// handler blocked in a call on the Ibis is woken (ErrClosed); Wait returns once every
// goroutine has ended, handlers included, and names a handler that never returns when
// its context ends. Every wait is on an event, with a generous deadline that only ends
// a hung run.

// closeVariant is an implementation (and nio flavour) the tests run on.
type closeVariant struct {
	name  string
	impl  string
	props map[string]string
}

func closeVariants() []closeVariant {
	vs := []closeVariant{{name: "tcp", impl: "tcp"}}
	for _, f := range []string{"blocking", "nonblocking", "thread"} {
		vs = append(vs, closeVariant{name: "nio-" + f, impl: nio.Name,
			props: map[string]string{nio.PropertySend: f, nio.PropertyReceive: f}})
	}
	return vs
}

// verifyNoLeaks checks, once the test and every cleanup registered after this call
// are done, that no goroutine is left.
func verifyNoLeaks(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, leakcheck.Options()...) })
}

// forEachVariant runs f as a subtest per variant, with a leak check after each.
func forEachVariant(t *testing.T, f func(t *testing.T, p *closePool)) {
	for _, v := range closeVariants() {
		t.Run(v.name, func(t *testing.T) {
			verifyNoLeaks(t)
			f(t, newClosePool(t, v))
		})
	}
}

var (
	upcallType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveAutoUpcalls,
		ipl.ConnectionUpcalls, ipl.CommunicationReliable, ipl.CommunicationFIFO)
	explicitType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.ConnectionUpcalls, ipl.CommunicationReliable, ipl.CommunicationFIFO)
)

// closeDeadline ends a hung run; no test relies on it.
const closeDeadline = 60 * time.Second

// closePool is a registry of the test's own, in which the tests open their instances.
type closePool struct {
	v    closeVariant
	srv  *registry.Server
	pool string
	ctx  context.Context
}

func newClosePool(t *testing.T, v closeVariant) *closePool {
	srv, err := registry.StartEmbedded("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), closeDeadline)
	t.Cleanup(cancel)
	return &closePool{v: v, srv: srv, pool: fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()), ctx: ctx}
}

// open starts an instance of the pool; the test closes it itself, and a cleanup
// closes it again in case the test stopped early.
func (p *closePool) open(t *testing.T, opts ...ipl.Option) ipl.Ibis {
	t.Helper()
	opts = append(opts, ipl.WithImplementation(p.v.impl), ipl.WithPortTypes(upcallType, explicitType),
		ipl.WithRegistry(p.srv.Addr()), ipl.WithPool(p.pool))
	for k, v := range p.v.props {
		opts = append(opts, ipl.WithProperty(k, v))
	}
	ib, err := ipl.New(p.ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeAndWait(t, ib) })
	return ib
}

// closeAndWait closes ib and waits for everything it ran to end, before the leak check.
func closeAndWait(t *testing.T, ib ipl.Ibis) {
	_ = ib.Close()
	ctx, cancel := context.WithTimeout(context.Background(), closeDeadline)
	defer cancel()
	if err := ib.Wait(ctx); err != nil {
		t.Errorf("wait after close: %v", err)
	}
}

// await waits for ch or fails the test with what.
func await[T any](t *testing.T, p *closePool, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-p.ctx.Done():
		t.Fatalf("%s: no sign after %v", what, closeDeadline)
		panic("unreachable")
	}
}

// sendTo connects a fresh send port of from to port of to and sends one message.
func sendTo(t *testing.T, p *closePool, from, to ipl.Ibis, port string) {
	t.Helper()
	sp, err := from.CreateSendPort(upcallType, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Connect(p.ctx, to.Identifier(), port); err != nil {
		t.Fatalf("connect to %s: %v", port, err)
	}
	m, err := sp.NewMessage(p.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.WriteInt64(1); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Finish(); err != nil {
		t.Fatal(err)
	}
}

// blockedHandler is a message handler that, once called, waits in Receive on an
// explicit port of its own Ibis (a call that only the Ibis's end ends), then in a
// registry call, then for the end of the registry's event channel (the last thing
// Close stops), and then until the test lets it go. It records what the calls returned
// and when it has returned itself.
type blockedHandler struct {
	other   ipl.ReceivePort
	ib      ipl.Ibis
	entered chan struct{}
	woke    chan [2]error
	gate    chan struct{}
	done    chan struct{}
}

func newBlockedHandler() *blockedHandler {
	return &blockedHandler{entered: make(chan struct{}), woke: make(chan [2]error, 1),
		gate: make(chan struct{}), done: make(chan struct{})}
}

func (h *blockedHandler) handle(ipl.ReadMessage) error {
	defer close(h.done)
	close(h.entered)
	_, rerr := h.other.Receive(context.Background())
	_, eerr := h.ib.Registry().ElectionResult(context.Background(), "never-held")
	for range h.ib.Registry().Events() {
	}
	h.woke <- [2]error{rerr, eerr}
	<-h.gate
	return nil
}

// releaseOnWake lets h go once its blocking calls have returned.
func releaseOnWake(h *blockedHandler, woke chan<- [2]error) {
	errs := <-h.woke
	woke <- errs
	close(h.gate)
}

// setUpBlocked gives ib a port "blocker" whose handler is h, and blocks h.
func setUpBlocked(t *testing.T, p *closePool, ib ipl.Ibis, h *blockedHandler) {
	t.Helper()
	var err error
	h.ib = ib
	if h.other, err = ib.CreateReceivePort(t.Context(), explicitType, "other"); err != nil {
		t.Fatal(err)
	}
	rp, err := ib.CreateReceivePort(t.Context(), upcallType, "blocker", ipl.WithMessageHandler(h.handle))
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.EnableMessageUpcalls(); err != nil {
		t.Fatal(err)
	}
	sendTo(t, p, ib, ib, "blocker")
	await(t, p, h.entered, "the handler was never called")
}

func checkWoken(t *testing.T, errs [2]error) {
	t.Helper()
	if !errors.Is(errs[0], ipl.ErrClosed) {
		t.Errorf("a handler's Receive on a port of the closing Ibis returned %v, want ErrClosed", errs[0])
	}
	if !errors.Is(errs[1], ipl.ErrClosed) {
		t.Errorf("a handler's registry call on the closing Ibis returned %v, want ErrClosed", errs[1])
	}
}

// Close from the main goroutine while an unrelated upcall is blocked in calls on the
// Ibis: Close returns, the calls return ErrClosed, and Wait returns only after the
// handler did.
func TestCloseWakesBlockedUpcall(t *testing.T) {
	forEachVariant(t, func(t *testing.T, p *closePool) {
		ib := p.open(t)
		h := newBlockedHandler()
		setUpBlocked(t, p, ib, h)
		woke := make(chan [2]error, 1)
		go releaseOnWake(h, woke)
		if err := ib.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		checkWoken(t, await(t, p, woke, "the blocked handler's calls did not return"))
		if err := ib.Wait(p.ctx); err != nil {
			t.Fatalf("wait: %v", err)
		}
		select {
		case <-h.done:
		default:
			t.Fatal("Wait returned while a message handler was still running")
		}
	})
}

// stuckHandler blocks on something outside Ibis until the test lets it go.
type stuckHandler struct {
	entered chan struct{}
	release chan struct{}
}

func newStuckHandler() *stuckHandler {
	return &stuckHandler{entered: make(chan struct{}), release: make(chan struct{})}
}

func (h *stuckHandler) handle(ipl.ReadMessage) error {
	close(h.entered)
	<-h.release
	return nil
}

func setUpStuck(t *testing.T, p *closePool, ib ipl.Ibis, h *stuckHandler) {
	t.Helper()
	rp, err := ib.CreateReceivePort(t.Context(), upcallType, "stuck", ipl.WithMessageHandler(h.handle))
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.EnableMessageUpcalls(); err != nil {
		t.Fatal(err)
	}
	sendTo(t, p, ib, ib, "stuck")
	await(t, p, h.entered, "the handler was never called")
}

// closeBound is the bound the tests give Wait for a handler that never returns; it
// only sets how long they take.
const closeBound = time.Second

// wantStuckReported checks that Wait, bounded by closeBound, names the stuck handler
// in an error matching ErrTimeout, and that once it is let go Wait returns nil.
func wantStuckReported(t *testing.T, p *closePool, ib ipl.Ibis, h *stuckHandler) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, closeBound)
	err := ib.Wait(ctx)
	cancel()
	if !errors.Is(err, ipl.ErrTimeout) {
		t.Fatalf("Wait with a handler that never returns: %v, want an error matching ErrTimeout", err)
	}
	if !strings.Contains(err.Error(), `"stuck"`) {
		t.Errorf("the error %q does not name the port whose handler is still running", err)
	}
	close(h.release)
	if err := ib.Wait(p.ctx); err != nil {
		t.Errorf("Wait once the handler was let go: %v", err)
	}
}

// A handler that never returns (it waits for something outside Ibis): Close does not
// wait for it and returns nil, the instance has ended, and Wait reports the handler
// until it returns.
func TestCloseReportsHandlerThatNeverReturns(t *testing.T) {
	forEachVariant(t, func(t *testing.T, p *closePool) {
		ib := p.open(t)
		h := newStuckHandler()
		setUpStuck(t, p, ib, h)
		if err := ib.Close(); err != nil {
			t.Errorf("close with a stuck handler: %v", err)
		}
		select {
		case <-ib.Done():
		default:
			t.Error("Done is open after Close")
		}
		wantStuckReported(t, p, ib, h)
	})
}

// Close called from inside a message handler does all its work and returns, without
// waiting for itself or for the other handlers (one blocked in calls on the Ibis is
// woken and returns; one that never returns is reported by Wait).
func TestCloseFromHandler(t *testing.T) {
	forEachVariant(t, func(t *testing.T, p *closePool) {
		t.Run("blocked in Ibis", func(t *testing.T) {
			ib := p.open(t)
			h := newBlockedHandler()
			setUpBlocked(t, p, ib, h)
			woke := make(chan [2]error, 1)
			go releaseOnWake(h, woke)
			res := make(chan error, 1)
			closer(t, p, ib, func() { res <- ib.Close() })
			if err := await(t, p, res, "Close from a handler did not return"); err != nil {
				t.Error(err)
			}
			checkWoken(t, await(t, p, woke, "the blocked handler's calls did not return"))
			if err := ib.Close(); err != nil {
				t.Errorf("second Close, from the test: %v", err)
			}
			if err := ib.Wait(p.ctx); err != nil {
				t.Fatalf("wait: %v", err)
			}
			select {
			case <-h.done:
			default:
				t.Error("Wait returned while a message handler was still running")
			}
		})
		t.Run("never returns", func(t *testing.T) {
			ib := p.open(t)
			h := newStuckHandler()
			setUpStuck(t, p, ib, h)
			res := make(chan error, 1)
			closer(t, p, ib, func() { res <- ib.Close() })
			if err := await(t, p, res, "Close from a handler did not return"); err != nil {
				t.Error(err)
			}
			wantStuckReported(t, p, ib, h)
		})
	})
}

// closer gives ib a port "closer" whose handler runs f, and sends it a message.
func closer(t *testing.T, p *closePool, ib ipl.Ibis, f func()) {
	t.Helper()
	rp, err := ib.CreateReceivePort(t.Context(), upcallType, "closer", ipl.WithMessageHandler(func(ipl.ReadMessage) error {
		f()
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.EnableMessageUpcalls(); err != nil {
		t.Fatal(err)
	}
	sendTo(t, p, ib, ib, "closer")
}

// connHooks is a connection handler whose calls run the given functions.
type connHooks struct {
	got  func(rp ipl.ReceivePort) bool
	lost func(rp ipl.ReceivePort)
}

func (c connHooks) GotConnection(rp ipl.ReceivePort, _ ipl.SendPortIdentifier) bool {
	if c.got != nil {
		return c.got(rp)
	}
	return true
}

func (c connHooks) LostConnection(rp ipl.ReceivePort, _ ipl.SendPortIdentifier, _ error) {
	if c.lost != nil {
		c.lost(rp)
	}
}

// Every kind of callback may close its own Ibis, or the port it was called for (an
// event handler: a port of its Ibis): a message handler, a connection handler's
// GotConnection (which runs during the connecting handshake) and LostConnection, a
// send port's disconnect handler, and an event handler. Close returns there without
// an error, and once the test has closed the Ibis too, Wait returns: everything ended.
func TestCloseFromEveryCallback(t *testing.T) {
	forEachVariant(t, func(t *testing.T, p *closePool) {
		for _, kind := range []string{"message", "got-connection", "lost-connection", "disconnect", "event"} {
			for _, target := range []string{"ibis", "port"} {
				t.Run(kind+"/"+target, func(t *testing.T) { closeFromCallback(t, p, kind, target == "ibis") })
			}
		}
	})
}

// closeFromCallback runs one case of TestCloseFromEveryCallback: the callback of the
// given kind closes the Ibis (ibis) or its port.
func closeFromCallback(t *testing.T, p *closePool, kind string, ibis bool) {
	res := make(chan error, 1)
	var once sync.Once
	var ib ipl.Ibis
	var watched ipl.ReceivePort // the port an event handler closes
	ready := make(chan struct{})
	closeOnce := func(port interface{ Close() error }) {
		once.Do(func() {
			<-ready
			if ibis {
				res <- ib.Close()
			} else {
				res <- port.Close()
			}
		})
	}
	var opts []ipl.Option
	if kind == "event" {
		opts = append(opts, ipl.WithEventHandler(func(e ipl.Event) {
			if e.Type == ipl.EventSignal && e.Name == "close" {
				closeOnce(watched)
			}
		}))
	}
	ib = p.open(t, opts...)
	var err, closeErr error
	awaited := false
	if watched, err = ib.CreateReceivePort(t.Context(), explicitType, "event-watched"); err != nil {
		t.Fatal(err)
	}
	close(ready)
	switch kind {
	case "message":
		rp, err := ib.CreateReceivePort(t.Context(), upcallType, "closer", ipl.WithMessageHandler(func(m ipl.ReadMessage) error {
			closeOnce(m.ReceivePort())
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		if err := rp.EnableMessageUpcalls(); err != nil {
			t.Fatal(err)
		}
		sendTo(t, p, ib, ib, "closer")
	case "got-connection":
		if _, err := ib.CreateReceivePort(t.Context(), explicitType, "watched",
			ipl.WithConnectionHandler(connHooks{got: func(rp ipl.ReceivePort) bool { closeOnce(rp); return true }})); err != nil {
			t.Fatal(err)
		}
		peer := p.open(t)
		sp, _ := peer.CreateSendPort(explicitType, "")
		// The answer depends on how far the Close got; only its end matters: the
		// Connect, which may retry on a closed port, is ended once the Close returned.
		cctx, cancel := context.WithCancel(p.ctx)
		connected := make(chan struct{})
		go func() {
			defer close(connected)
			_ = sp.Connect(cctx, ib.Identifier(), "watched")
		}()
		closeErr, awaited = await(t, p, res, "Close from the callback did not return"), true
		cancel()
		await(t, p, connected, "Connect did not end")
	case "lost-connection":
		if _, err := ib.CreateReceivePort(t.Context(), explicitType, "watched",
			ipl.WithConnectionHandler(connHooks{lost: func(rp ipl.ReceivePort) { closeOnce(rp) }})); err != nil {
			t.Fatal(err)
		}
		peer := p.open(t)
		sp, _ := peer.CreateSendPort(explicitType, "")
		if err := sp.Connect(p.ctx, ib.Identifier(), "watched"); err != nil {
			t.Fatal(err)
		}
		_ = sp.Close()
	case "disconnect":
		peer := p.open(t)
		rp, err := peer.CreateReceivePort(t.Context(), explicitType, "gone")
		if err != nil {
			t.Fatal(err)
		}
		sp, err := ib.CreateSendPort(explicitType, "", ipl.WithDisconnectHandler(
			func(sp ipl.SendPort, _ ipl.ReceivePortIdentifier, _ error) { closeOnce(sp) }))
		if err != nil {
			t.Fatal(err)
		}
		if err := sp.Connect(p.ctx, peer.Identifier(), "gone"); err != nil {
			t.Fatal(err)
		}
		_ = rp.Close()
	case "event":
		if err := ib.Registry().Signal(p.ctx, "close", ib.Identifier()); err != nil {
			t.Fatal(err)
		}
	}
	if !awaited {
		closeErr = await(t, p, res, "Close from the callback did not return")
	}
	if closeErr != nil {
		t.Errorf("Close from the callback: %v", closeErr)
	}
	if ibis {
		await(t, p, ib.Done(), "the Ibis closed from a callback never ended")
	}
	if err := ib.Close(); err != nil {
		t.Errorf("Close after the callback's: %v", err)
	}
	if err := ib.Wait(p.ctx); err != nil {
		t.Errorf("Wait after the callback's Close: %v", err)
	}
}
