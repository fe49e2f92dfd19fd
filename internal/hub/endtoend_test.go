package hub

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/internal/tlsconf"
)

// The members run their own pool check and TLS over a relayed connection, as the
// dialling and the accepting side; the hub (open here) only copies bytes.
func TestEndToEndHandshakeThroughHub(t *testing.T) {
	files, err := tlsconf.Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	serverTLS, err := files.Server()
	if err != nil {
		t.Fatal(err)
	}
	clientTLS, err := files.Client()
	if err != nil {
		t.Fatal(err)
	}
	secret := poolauth.New([]byte("end to end"))
	_, addr := startHub(t)
	m := register(t, addr, Registration{Pool: "p", Key: "k"})
	out, err := Relay(testCtx(t), addr, RelayRequest{Pool: "p", Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	in := accepted(t, m)
	for _, c := range []net.Conn{in, out} {
		_ = c.SetDeadline(time.Now().Add(patience))
	}

	accepted := make(chan error, 1)
	go func() {
		s := tls.Server(in, serverTLS)
		if err := s.Handshake(); err != nil {
			accepted <- err
			return
		}
		if _, err := poolauth.Accept(s, func(string) (poolauth.Secret, bool) { return secret, true }); err != nil {
			accepted <- err
			return
		}
		_, err := io.Copy(s, io.LimitReader(s, 5)) // echo five bytes
		accepted <- err
	}()
	c := tls.Client(out, clientTLS)
	if err := c.Handshake(); err != nil {
		t.Fatalf("TLS through the hub: %v", err)
	}
	if err := poolauth.Dial(c, "p", secret); err != nil {
		t.Fatalf("pool check through the hub: %v", err)
	}
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "hello" {
		t.Fatalf("echo %q, %v", buf, err)
	}
	if err := <-accepted; err != nil {
		t.Fatal(err)
	}
}

func TestLimits(t *testing.T) {
	srv, addr := startHub(t, WithMaxMembers(1), WithMaxPending(1), WithRelayTimeout(patience))
	rawMember(t, addr, "p", poolauth.Secret{}, "silent", time.Minute)
	_, err := Register(testCtx(t), addr, Registration{Pool: "p", Key: "second"})
	if !errors.Is(err, ErrRefused) || errors.Is(err, poolauth.ErrUnauthenticated) {
		t.Errorf("a member over the limit: %v, want ErrRefused for the limit", err)
	}
	// One relay waits for the silent member; a second one is over the limit.
	waiting := make(chan error, 1)
	go func() {
		c, err := Relay(testCtx(t), addr, RelayRequest{Pool: "p", Key: "silent"})
		if c != nil {
			_ = c.Close()
		}
		waiting <- err
	}()
	waitFor(t, "a relay pending", func() bool { return srv.Stats().Pending == 1 })
	_, err = Relay(testCtx(t), addr, RelayRequest{Pool: "p", Key: "silent"})
	if !errors.Is(err, ErrRefused) {
		t.Errorf("a relay over the limit: %v, want ErrRefused", err)
	}
	_ = srv.Close()
	if err := <-waiting; !errors.Is(err, ErrUnreachable) {
		t.Errorf("the waiting relay when the hub closed: %v, want ErrUnreachable", err)
	}
}
