package impltest

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// recording keeps what is written to a connection, as someone on the path could.
type recording struct {
	net.Conn
	w *bytes.Buffer
}

func (r recording) Write(b []byte) (int, error) {
	r.w.Write(b)
	return r.Conn.Write(b)
}

// PoolSecret checks the pool check of data connections: two members with the pool's
// secret connect and talk; a process of another pool with another secret, a raw peer
// without a secret and one that replays the hello bytes of an accepted check are refused
// with ErrUnauthenticated before any byte reaches a port, and each refusal is logged with
// the peer's address.
func PoolSecret(t *testing.T, impl string, props map[string]string) {
	secret := []byte("the pool's secret")
	srv, err := registry.StartEmbedded("127.0.0.1:0", registry.WithServerSecret(secret))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	core, logs := observer.New(zap.WarnLevel)
	pool := []ipl.Option{ipl.WithRegistry(srv.Addr()), ipl.WithPool("secret-pool"), ipl.WithPoolSecret(secret)}
	a := NewIbis(t, impl, props, append(pool, ipl.WithLogger(zap.New(core)))...)
	b := NewIbis(t, impl, props, pool...)
	rp, err := a.CreateReceivePort(t.Context(), dataType, "in")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sp, err := b.CreateSendPort(dataType, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Connect(ctx, a.Identifier(), "in"); err != nil {
		t.Fatalf("a member with the secret: %v", err)
	}
	w, err := sp.NewMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteString("hello"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	m, err := rp.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := m.ReadString(); err != nil || s != "hello" {
		t.Fatalf("received %q, %v", s, err)
	}
	if _, err := m.Finish(); err != nil {
		t.Fatal(err)
	}

	// refused waits for the refusal's log line: the acceptor logs it after it has told
	// the peer, so it may come after the peer's error.
	refused := func(what string, before int) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			for _, e := range logs.All()[before:] {
				if e.Message == "refused a connection: pool check failed" && strings.HasPrefix(e.ContextMap()["remote"].(string), "127.0.0.1:") {
					return
				}
			}
		}
		t.Errorf("%s: no refusal with the peer's address in the log: %v", what, logs.All()[before:])
	}

	// Another pool (its own open registry) with another secret dials a's port.
	before := logs.Len()
	stranger := NewIbis(t, impl, props, ipl.WithPoolSecret([]byte("a guess")))
	ssp, err := stranger.CreateSendPort(dataType, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := ssp.Connect(ctx, a.Identifier(), "in"); !errors.Is(err, ipl.ErrUnauthenticated) {
		t.Errorf("connect from another pool with another secret: %v, want ErrUnauthenticated", err)
	}
	refused("another secret", before)

	// A raw peer without the secret, and one replaying an accepted check's bytes.
	before = logs.Len()
	c, err := net.Dial("tcp", a.Identifier().Address)
	if err != nil {
		t.Fatal(err)
	}
	if err := poolauth.Dial(c, "secret-pool", poolauth.Secret{}); !errors.Is(err, ipl.ErrUnauthenticated) {
		t.Errorf("raw peer without the secret: %v, want ErrUnauthenticated", err)
	}
	_ = c.Close()
	refused("no secret", before)

	var hello bytes.Buffer
	c, err = net.Dial("tcp", a.Identifier().Address)
	if err != nil {
		t.Fatal(err)
	}
	if err := poolauth.Dial(recording{c, &hello}, "secret-pool", poolauth.New(secret)); err != nil {
		t.Fatalf("the check to be replayed: %v", err)
	}
	_ = c.Close()
	before = logs.Len()
	c, err = net.Dial("tcp", a.Identifier().Address)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write(hello.Bytes())
	_, _ = c.Write([]byte("a handshake request would follow"))
	ExpectClosed(t, "replayed check", c)
	refused("replayed check", before)
}
