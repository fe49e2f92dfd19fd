package registry

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// dialFrom opens a connection to s from the loopback address src (any
// 127.x.y.z is the local machine on Linux), standing for another machine.
func dialFrom(t *testing.T, s *Server, src string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	conn, err := d.Dial("tcp", s.Addr())
	if err != nil {
		t.Skipf("cannot dial from %s: %v", src, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// Idle connections from one address use up only that address's share of
// the places for connections that have not joined: another address still
// joins, and a connection beyond a limit is told which limit it hit
// (ErrTooManyRequests, not a hint at TLS).
func TestUnjoinedLimitPerSource(t *testing.T) {
	s := internalServer(t, WithMaxUnjoinedConnections(3), WithMaxUnjoinedPerSource(2))
	ctx, cancel := context.WithTimeout(context.Background(), internalTimeout)
	defer cancel()
	dialFrom(t, s, "127.0.0.2")
	dialFrom(t, s, "127.0.0.2")
	waitFor(t, "two idle connections", func() bool { return s.unjoinedConns() == 2 })

	err := poolauth.Dial(dialFrom(t, s, "127.0.0.2"), "p", poolauth.Secret{})
	if err == nil || !strings.Contains(err.Error(), "limit per source address") {
		t.Fatalf("a third connection from the flooding address: %v, want a refusal naming the limit per source", err)
	}

	c, err := Join(ctx, s.Addr(), "p") // from 127.0.0.1
	if err != nil {
		t.Fatalf("join from another address beside the flood: %v", err)
	}
	defer c.Close()

	dialFrom(t, s, "127.0.0.3")
	waitFor(t, "three idle connections", func() bool { return s.unjoinedConns() == 3 })
	_, err = Join(ctx, s.Addr(), "p")
	if !errors.Is(err, ErrTooManyRequests) || errors.Is(err, ErrUnauthenticated) ||
		!strings.Contains(err.Error(), "the server's limit") || strings.Contains(err.Error(), "TLS") {
		t.Fatalf("join with every place taken: %v, want ErrTooManyRequests naming the limit", err)
	}
}
