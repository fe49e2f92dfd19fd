package registry_test

import (
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ibisgo/ibis/registry"
)

// TestPoolSecret: a server with secrets lets in only clients that prove they know their
// pool's, refuses the others with ErrUnauthenticated and logs each refusal with the
// client's address; a client with a secret refuses a server that cannot prove it knows it.
func TestPoolSecret(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	s := startServer(t, registry.WithServerLogger(zap.New(core)), registry.WithServerSecret([]byte("site-wide")),
		registry.WithPoolSecrets(map[string][]byte{"own": []byte("own-secret")}))
	ctx := testContext(t)

	a := join(t, s, "p", registry.WithPoolSecret([]byte("site-wide")))
	b := join(t, s, "p", registry.WithPoolSecret([]byte("site-wide")))
	if n, err := a.Sequence(ctx, "s"); err != nil || n != 0 {
		t.Fatalf("sequence with the right secret: %d %v", n, err)
	}
	if len(b.Members()) != 2 {
		t.Fatalf("members: %v", b.Members())
	}
	join(t, s, "own", registry.WithPoolSecret([]byte("own-secret")))

	for _, c := range []struct {
		name, pool, secret string
	}{
		{"wrong secret", "p", "guess"},
		{"no secret", "p", ""},
		{"another pool's secret", "own", "site-wide"},
		{"the site secret for a pool with its own", "p", "own-secret"},
	} {
		before := logs.Len()
		var opts []registry.Option
		if c.secret != "" {
			opts = append(opts, registry.WithPoolSecret([]byte(c.secret)))
		}
		_, err := registry.Join(ctx, s.Addr(), c.pool, opts...)
		if !errors.Is(err, registry.ErrUnauthenticated) {
			t.Errorf("%s: %v, want ErrUnauthenticated", c.name, err)
			continue
		}
		// The server logs after it has answered: the client may know first.
		eventually(t, c.name+": a refusal with the remote address in the server's log", func() bool {
			for _, e := range logs.All()[before:] {
				if e.Message == "refused a connection: pool check failed" && strings.HasPrefix(e.ContextMap()["remote"].(string), "127.0.0.1:") &&
					e.ContextMap()["pool"] == c.pool {
					return true
				}
			}
			return false
		})
	}
}

// TestServerWithoutSecretRefused: a client with a secret does not join through a server
// that cannot prove it knows it (mutual), and a pool without a secret stays open.
func TestServerWithoutSecretRefused(t *testing.T) {
	s := startServer(t)
	_, err := registry.Join(testContext(t), s.Addr(), "p", registry.WithPoolSecret([]byte("mine")))
	if !errors.Is(err, registry.ErrUnauthenticated) || !strings.Contains(err.Error(), "cannot prove") {
		t.Fatalf("join through a server without the secret: %v", err)
	}
	join(t, s, "p") // open
}
