package core

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// portlessTransport is a transport for instances that make no connections: the tests
// of the registry view need only the instance's registry membership.
type portlessTransport struct{}

func (portlessTransport) Start(Acceptor) (string, error) { return "portless:0", nil }
func (portlessTransport) Dial(context.Context, string, *Request, func(error)) (OutConn, *Reply, error) {
	return nil, nil, errors.New("portless transport: no connections")
}
func (portlessTransport) Close() error { return nil }

func (portlessTransport) Capabilities() Capabilities { return Capabilities{} }

func openPortless(ctx context.Context, t *testing.T, regAddr, pool string, size int) *Instance {
	t.Helper()
	cfg := &ipl.Config{Registry: regAddr, Pool: pool, PoolSize: size, Logger: zap.NewNop(),
		ListenHost: "127.0.0.1", ConnectTimeout: 10 * time.Second, MaxMessageSize: 1 << 20}
	in, err := Open(ctx, cfg, "portless", portlessTransport{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close() })
	return in
}

// registryCall is one call of every ipl.Registry method that can fail.
type registryCall struct {
	method string
	call   func(ctx context.Context, r ipl.Registry) error
}

func registryCalls(arg string, to ...ipl.IbisIdentifier) []registryCall {
	return []registryCall{
		{"WaitUntilPoolClosed", func(ctx context.Context, r ipl.Registry) error { return r.WaitUntilPoolClosed(ctx) }},
		{"Elect", func(ctx context.Context, r ipl.Registry) error { _, err := r.Elect(ctx, arg); return err }},
		{"ElectionResult", func(ctx context.Context, r ipl.Registry) error { _, err := r.ElectionResult(ctx, arg); return err }},
		{"Signal", func(ctx context.Context, r ipl.Registry) error { return r.Signal(ctx, arg, to...) }},
		{"Terminate", func(ctx context.Context, r ipl.Registry) error { return r.Terminate(ctx) }},
		{"WaitUntilTerminated", func(ctx context.Context, r ipl.Registry) error { return r.WaitUntilTerminated(ctx) }},
		{"Sequence", func(ctx context.Context, r ipl.Registry) error { _, err := r.Sequence(ctx, arg); return err }},
	}
}

// TestRegistryErrorsMatchIpl checks the error contract of ipl.Registry: for each method
// and each way it can fail, the error matches the ipl sentinel (and keeps matching what
// it matched before, such as context.DeadlineExceeded).
func TestRegistryErrorsMatchIpl(t *testing.T) {
	defer goleak.VerifyNone(t, leakcheck.Options()...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := registry.StartEmbedded("127.0.0.1:0", registry.WithRestartable(true),
		registry.WithServerLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	open := openPortless(ctx, t, srv.Addr(), "rv", 0)
	world := openPortless(ctx, t, srv.Addr(), "cw", 2) // a closed world that never fills
	past, cancelPast := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancelPast()
	stranger := ipl.IbisIdentifier{Pool: "rv", ID: "99"}

	type row struct {
		situation string
		in        *Instance
		ctx       context.Context
		call      registryCall
		want      []error
	}
	var rows []row
	add := func(situation string, in *Instance, ctx context.Context, calls []registryCall, methods map[string]bool, want ...error) {
		for _, c := range calls {
			if methods == nil || methods[c.method] {
				rows = append(rows, row{situation, in, ctx, c, want})
			}
		}
	}
	// Deadlines: the calls that wait for something that does not come.
	add("deadline passed", world, past, registryCalls("nobody-wins"),
		map[string]bool{"WaitUntilPoolClosed": true, "ElectionResult": true, "WaitUntilTerminated": true},
		ipl.ErrTimeout, context.DeadlineExceeded)
	add("empty name", open, ctx, registryCalls(""),
		map[string]bool{"Elect": true, "ElectionResult": true, "Signal": true, "Sequence": true},
		ipl.ErrInvalidArgument, registry.ErrInvalid)
	add("signal to a stranger", open, ctx, registryCalls("hi", stranger), map[string]bool{"Signal": true},
		ipl.ErrNotMember, registry.ErrNotMember)
	add("open world", open, ctx, registryCalls("x"), map[string]bool{"WaitUntilPoolClosed": true},
		ipl.ErrUnsupported, registry.ErrNotClosedWorld)
	check := func(rows []row) {
		t.Helper()
		for _, r := range rows {
			t.Run(fmt.Sprintf("%s/%s", r.situation, r.call.method), func(t *testing.T) {
				err := r.call.call(r.ctx, r.in.Registry())
				for _, w := range r.want {
					if !errors.Is(err, w) {
						t.Fatalf("got %v, want an error matching %v", err, w)
					}
				}
			})
		}
	}
	check(rows)

	// Calls waiting when the instance closes end with ErrClosed.
	closing := openPortless(ctx, t, srv.Addr(), "rv", 0)
	waiting := make(chan error, 2)
	go func() { _, err := closing.Registry().ElectionResult(ctx, "nobody-wins"); waiting <- err }()
	go func() { waiting <- closing.Registry().WaitUntilTerminated(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for srv.Stats().Waiting == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if err := closing.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-waiting; !errors.Is(err, ipl.ErrClosed) {
			t.Fatalf("call waiting during Close: %v, want ErrClosed", err)
		}
	}

	// The registry goes away: every call fails with ErrRegistryLost, and the instance
	// does not end.
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	for _, in := range []*Instance{open, world} {
		for ev := range in.Registry().Events() {
			if ev.Type == ipl.EventRegistryLost {
				break
			}
		}
		select {
		case <-in.Done():
			t.Fatal("the instance ended because the registry was lost")
		default:
		}
	}
	// WaitUntilPoolClosed of the closed world; the rest of the open one.
	notWait := map[string]bool{}
	for _, c := range registryCalls("") {
		notWait[c.method] = c.method != "WaitUntilPoolClosed"
	}
	rows = nil
	add("registry lost", open, ctx, registryCalls("x"), notWait, ipl.ErrRegistryLost)
	add("registry lost", world, ctx, registryCalls("x"), map[string]bool{"WaitUntilPoolClosed": true}, ipl.ErrRegistryLost)
	check(rows)

	// After Close, every call fails with ErrClosed.
	for _, in := range []*Instance{open, world} {
		if err := in.Close(); err != nil {
			t.Fatal(err)
		}
	}
	rows = nil
	add("closed", open, ctx, registryCalls("x"), notWait, ipl.ErrClosed)
	add("closed", world, ctx, registryCalls("x"), map[string]bool{"WaitUntilPoolClosed": true}, ipl.ErrClosed)
	check(rows)
}

// TestOpenWithUnreachableRegistry: an instance whose registry is not there keeps trying
// to join until its context ends, and then fails with an error matching
// ipl.ErrRegistryLost and the context's error.
func TestOpenWithUnreachableRegistry(t *testing.T) {
	defer goleak.VerifyNone(t, leakcheck.Options()...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil { // nobody listens there now
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	cfg := &ipl.Config{Registry: addr, Pool: "nowhere", Logger: zap.NewNop(), ListenHost: "127.0.0.1",
		ConnectTimeout: time.Second, MaxMessageSize: 1 << 20}
	in, err := Open(ctx, cfg, "portless", portlessTransport{})
	if err == nil {
		_ = in.Close()
		t.Fatal("joined a pool at an address nobody listens on")
	}
	if !errors.Is(err, ipl.ErrRegistryLost) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want an error matching ErrRegistryLost and context.DeadlineExceeded", err)
	}
}
