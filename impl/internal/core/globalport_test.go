package core

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// TestGlobalPortTakesCallersContext: publishing a Global receive port's name and
// withdrawing it at CloseContext are bounded by the caller's context. A port whose name
// could not be published is not made (and its name is not left bound); a port closed
// with an ended context closes all the same and leaves its name bound.
func TestGlobalPortTakesCallersContext(t *testing.T) {
	defer goleak.VerifyNone(t, leakcheck.Options()...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := registry.StartEmbedded("127.0.0.1:0", registry.WithServerLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := &ipl.Config{Registry: srv.Addr(), Pool: "global", PortTypes: []ipl.PortType{singleType}, Logger: zap.NewNop(),
		ListenHost: "127.0.0.1", ConnectTimeout: 10 * time.Second, MaxMessageSize: 1 << 20}
	open := func() *Instance {
		in, err := Open(ctx, cfg, "portless", portlessTransport{})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	in := open()
	defer in.Close()
	other := open()
	defer other.Close()
	past, cancelPast := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancelPast()

	if _, err := in.CreateReceivePort(past, singleType, "g", ipl.Global()); !errors.Is(err, ipl.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("publishing with a passed deadline: %v, want an error matching ErrTimeout and DeadlineExceeded", err)
	}
	local, err := in.CreateReceivePort(past, singleType, "local")
	if err != nil {
		t.Fatalf("a port that is not Global does not use its context: %v", err)
	}
	_ = local.Close()

	rp, err := in.CreateReceivePort(ctx, singleType, "g", ipl.Global())
	if err != nil {
		t.Fatalf("the port that could not be published was made after all: %v", err)
	}
	if id, port, err := in.reg.Lookup(ctx, "g"); err != nil || id != in.Identifier() || port != "g" {
		t.Fatalf("lookup of the published port: %v %q %v", id, port, err)
	}
	if err := rp.CloseContext(ctx); err != nil {
		t.Fatal(err)
	}
	rp, err = in.CreateReceivePort(ctx, singleType, "g", ipl.Global())
	if err != nil {
		t.Fatalf("publishing again after CloseContext withdrew the name: %v", err)
	}
	// Another member cannot take the name, and failing leaves it with its holder.
	if _, err := other.CreateReceivePort(ctx, singleType, "g", ipl.Global()); !errors.Is(err, registry.ErrAlreadyBound) {
		t.Fatalf("publishing a name another member holds: %v, want ErrAlreadyBound", err)
	}
	if id, _, err := other.reg.Lookup(ctx, "g"); err != nil || id != in.Identifier() {
		t.Fatalf("lookup after another member failed to take the name: %v %v, want %v", id, err, in.Identifier())
	}
	if err := rp.CloseContext(past); err != nil {
		t.Fatalf("CloseContext with an ended context: %v, want nil", err)
	}
	if _, err := other.CreateReceivePort(ctx, singleType, "g", ipl.Global()); !errors.Is(err, registry.ErrAlreadyBound) {
		t.Fatalf("publishing a name that CloseContext with an ended context left bound: %v, want ErrAlreadyBound", err)
	}
	if _, err := in.CreateReceivePort(ctx, singleType, "g"); err != nil {
		t.Fatalf("the port closed with an ended context is still open: %v", err)
	}
}
