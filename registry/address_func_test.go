package registry_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/registry"
)

// WithAddressFunc publishes what the function makes of the local address of the
// connection to the registry; an address too long fails the join with ErrInvalid.
func TestAddressFunc(t *testing.T) {
	srv, err := registry.StartEmbedded("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var seen net.Addr
	c, err := registry.Join(ctx, srv.Addr(), "addrfunc", registry.WithAddressFunc(func(local net.Addr) string {
		seen = local
		host, _, _ := net.SplitHostPort(local.String())
		return net.JoinHostPort(host, "4000")
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if seen == nil || c.Identity().Address != "127.0.0.1:4000" {
		t.Fatalf("published %q (local address %v), want 127.0.0.1:4000", c.Identity().Address, seen)
	}
	_, err = registry.Join(ctx, srv.Addr(), "addrfunc", registry.WithAddressFunc(func(net.Addr) string {
		return strings.Repeat("x", registry.MaxStringLength+1)
	}))
	if !errors.Is(err, registry.ErrInvalid) {
		t.Fatalf("join with an address too long: %v, want ErrInvalid", err)
	}
}
