package core

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/hub"
)

// countingInjector counts the sockets handed to it, nil ones apart, and refuses them.
type countingInjector struct{ conns, nils atomic.Int64 }

func (i *countingInjector) Inject(c net.Conn, _ string) bool {
	if c == nil {
		i.nils.Add(1)
		return true
	}
	i.conns.Add(1)
	return false
}

// TestServeHubEndsWithItsHub stops the hub under a registered member, 20 times: serveHub
// returns each time and never hands the transport a nil socket (the closed Accepted
// channel's zero value), which made tcp's Inject panic when a hub died.
func TestServeHubEndsWithItsHub(t *testing.T) {
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := hub.NewServer()
		served := make(chan error, 1)
		go func() { served <- s.Serve(ln) }()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		m, err := hub.Register(ctx, ln.Addr().String(), hub.Registration{Pool: "p", Key: "0123456789abcdef"})
		if err != nil {
			cancel()
			_ = s.Close()
			<-served
			t.Fatal(err)
		}
		inj := &countingInjector{}
		done := make(chan struct{})
		go func() {
			defer close(done)
			serveHub(ctx, ln.Addr().String(), m, inj, zap.NewNop())
		}()
		_ = s.Close()
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatal("serveHub did not return after its hub closed")
		}
		cancel()
		if err := <-served; !errors.Is(err, hub.ErrClosed) {
			t.Errorf("Serve: %v", err)
		}
		if n := inj.nils.Load(); n != 0 {
			t.Fatalf("serveHub handed the transport %d nil sockets when its hub closed", n)
		}
	}
}
