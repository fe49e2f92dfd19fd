package tlsconf

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// handshake runs a TLS handshake over a local TCP connection between a server and a
// client configuration and returns the two sides' errors.
func handshake(t *testing.T, server, client *tls.Config) (serr, cerr error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		tc := tls.Server(c, server)
		_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
		err = tc.Handshake()
		if err == nil { // the client's certificate is checked after its Finished: read once
			_, err = tc.Read(make([]byte, 1))
		}
		done <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tc := tls.Client(c, client)
	_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
	cerr = tc.Handshake()
	if cerr == nil {
		_, cerr = tc.Write([]byte{1})
	}
	serr = <-done
	if errors.Is(serr, io.EOF) {
		serr = nil
	}
	return serr, cerr
}

func TestGeneratedPoolTalks(t *testing.T) {
	f, err := Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := f.Server()
	if err != nil {
		t.Fatal(err)
	}
	cc, err := f.Client()
	if err != nil {
		t.Fatal(err)
	}
	if serr, cerr := handshake(t, sc, cc); serr != nil || cerr != nil {
		t.Fatalf("server %v, client %v", serr, cerr)
	}
}

// TestOtherCARefused: a member of another pool (certificate from another CA) is refused
// by the server, and a server of another pool by the client.
func TestOtherCARefused(t *testing.T) {
	ours, err := Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := ours.Server()
	strangerClient, _ := theirs.Client()
	if serr, _ := handshake(t, sc, strangerClient); serr == nil {
		t.Error("server accepted a client certificate of another CA")
	}
	strangerServer, _ := theirs.Server()
	cc, _ := ours.Client()
	if _, cerr := handshake(t, strangerServer, cc); cerr == nil || !strings.Contains(cerr.Error(), "not one of the pool's") {
		t.Errorf("client accepted a server certificate of another CA: %v", cerr)
	}
}

func TestIncompleteConfig(t *testing.T) {
	for _, f := range []Files{{Cert: "c"}, {Cert: "c", Key: "k"}, {CA: "x"}} {
		if _, err := f.Server(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", f, err)
		}
	}
	f := Files{Cert: "/nonexistent/c", Key: "/nonexistent/k", CA: "/nonexistent/ca"}
	if _, err := f.Client(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "/nonexistent/c") {
		t.Errorf("missing files: %v", err)
	}
	if (Files{}).IsSet() {
		t.Error("zero Files claims to be set")
	}
}
