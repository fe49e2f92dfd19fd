package hub

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// A caller's context ends a relay that waits for its target, and a registration that
// waits for the hub's probe.
func TestContextEndsWaits(t *testing.T) {
	srv, addr := startHub(t, WithRelayTimeout(patience), WithProbeTimeout(patience))
	rawMember(t, addr, "p", poolauth.Secret{}, "silent", time.Minute)

	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() {
		_, err := Relay(ctx, addr, RelayRequest{Pool: "p", Key: "silent"})
		ended <- err
	}()
	waitFor(t, "the relay pending", func() bool { return srv.Stats().Pending == 1 })
	cancel()
	if err := <-ended; !errors.Is(err, ErrTimeout) {
		t.Errorf("relay with a cancelled context: %v, want ErrTimeout", err)
	}
	// The hub notices that the dialler left and frees the relay's slot.
	waitFor(t, "the relay no longer pending", func() bool { return srv.Stats().Pending == 0 })

	probed := make(chan struct{}, 1)
	mute := prober(t, func(c net.Conn) {
		probed <- struct{}{}
		_, _ = io.Copy(io.Discard, c)
	})
	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		_, err := Register(ctx, addr, Registration{Pool: "p", Key: "k", Advertise: []string{mute}})
		ended <- err
	}()
	<-probed
	cancel()
	if err := <-ended; !errors.Is(err, ErrTimeout) {
		t.Errorf("register with a cancelled context: %v, want ErrTimeout", err)
	}
}
