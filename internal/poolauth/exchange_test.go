package poolauth

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
)

// pair runs Accept and Dial over an in-memory connection and returns both results.
func pair(t *testing.T, lookup Lookup, pool string, client Secret, record *bytes.Buffer) (acceptPool string, aerr, derr error) {
	t.Helper()
	s, c := net.Pipe()
	defer s.Close()
	defer c.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		acceptPool, aerr = Accept(s, lookup)
		s.Close()
	}()
	var conn io.ReadWriter = c
	if record != nil {
		conn = recorder{c, record}
	}
	derr = Dial(conn, pool, client)
	c.Close()
	<-done
	return acceptPool, aerr, derr
}

// recorder keeps what the client writes, as someone on the path could.
type recorder struct {
	net.Conn
	w *bytes.Buffer
}

func (r recorder) Write(b []byte) (int, error) {
	r.w.Write(b)
	return r.Conn.Write(b)
}

func only(pool string, s Secret) Lookup {
	return func(p string) (Secret, bool) { return s, p == pool }
}

func TestExchange(t *testing.T) {
	good, bad := New([]byte("right")), New([]byte("wrong"))
	for _, c := range []struct {
		name           string
		server, client Secret
		pool           string
		acceptOK       bool
		dialOK         bool
	}{
		{"open pool", Secret{}, Secret{}, "p", true, true},
		{"right secret", good, good, "p", true, true},
		{"wrong secret", good, bad, "p", false, false},
		{"no secret", good, Secret{}, "p", false, false},
		{"server without the secret", Secret{}, good, "p", true, false},
		{"pool not served", good, good, "q", false, false},
	} {
		pool, aerr, derr := pair(t, only("p", c.server), c.pool, c.client, nil)
		if (aerr == nil) != c.acceptOK || (derr == nil) != c.dialOK {
			t.Errorf("%s: accept %v, dial %v", c.name, aerr, derr)
			continue
		}
		if pool != c.pool {
			t.Errorf("%s: accepted pool %q, want %q", c.name, pool, c.pool)
		}
		for _, err := range []error{aerr, derr} {
			if err != nil && !errors.Is(err, ErrUnauthenticated) {
				t.Errorf("%s: %v does not match ErrUnauthenticated", c.name, err)
			}
		}
		var r *Refusal
		if aerr != nil && (!errors.As(aerr, &r) || r.Pool != c.pool) {
			t.Errorf("%s: accept error %v is not a Refusal for pool %q", c.name, aerr, c.pool)
		}
	}
}

// TestReplayRefused: the bytes of a real client's accepted hello, sent again on a new
// connection, are refused: the new challenge's nonce is not in their proof.
func TestReplayRefused(t *testing.T) {
	s := New([]byte("right"))
	var rec bytes.Buffer
	if _, aerr, derr := pair(t, only("p", s), "p", s, &rec); aerr != nil || derr != nil {
		t.Fatalf("the recorded exchange failed: %v, %v", aerr, derr)
	}
	srv, cli := net.Pipe()
	defer cli.Close()
	done := make(chan error, 1)
	go func() {
		_, err := Accept(srv, only("p", s))
		srv.Close()
		done <- err
	}()
	go io.Copy(io.Discard, cli) // the challenge and the verdict, unread by the replayer
	_, _ = cli.Write(rec.Bytes())
	if err := <-done; !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("replayed hello: %v, want a refusal", err)
	}
}

func TestNotAPeer(t *testing.T) {
	srv, cli := net.Pipe()
	go func() {
		_, _ = io.CopyN(io.Discard, cli, 37)
		_, _ = cli.Write([]byte("GET / HTTP/1.1\r\n\r\n......................................"))
		cli.Close()
	}()
	if _, err := Accept(srv, only("p", Secret{})); !errors.Is(err, ErrProtocol) {
		t.Errorf("accept of an HTTP request: %v, want ErrProtocol", err)
	}
	srv, cli = net.Pipe()
	go func() {
		_, _ = srv.Write(append([]byte("IBAU"), 9))
		_, _ = io.Copy(io.Discard, srv)
	}()
	if err := Dial(readFrom{cli, bytes.NewReader(append(append([]byte("IBAU"), 9), make([]byte, 32)...))}, "p", Secret{}); !errors.Is(err, ErrProtocol) {
		t.Errorf("dial of a version-9 server: %v, want ErrProtocol", err)
	}
	cli.Close()
	srv.Close()
}

// readFrom reads from r and writes to the connection.
type readFrom struct {
	net.Conn
	r io.Reader
}

func (f readFrom) Read(b []byte) (int, error) { return f.r.Read(b) }

// fuzzConn feeds a side of the exchange the fuzzer's bytes and swallows what it writes.
type fuzzConn struct{ r io.Reader }

func (f fuzzConn) Read(b []byte) (int, error)  { return f.r.Read(b) }
func (f fuzzConn) Write(b []byte) (int, error) { return len(b), nil }

// FuzzAccept: no client bytes make Accept panic or accept without the secret.
func FuzzAccept(f *testing.F) {
	f.Add(append(append([]byte("IBAU\x01\x00\x01p"), make([]byte, 32)...), 0))
	f.Add(append(append([]byte("IBAU\x01\x00\x01p"), make([]byte, 32)...), append([]byte{1}, make([]byte, 32)...)...))
	f.Fuzz(func(t *testing.T, in []byte) {
		if _, err := Accept(fuzzConn{bytes.NewReader(in)}, only("p", New([]byte("s")))); err == nil {
			t.Fatal("accepted without knowing the secret")
		}
		_, _ = Accept(fuzzConn{bytes.NewReader(in)}, func(string) (Secret, bool) { return Secret{}, true })
	})
}

// FuzzDial: no server bytes make Dial panic, or succeed for a client with a secret.
func FuzzDial(f *testing.F) {
	f.Add(append(append([]byte("IBAU\x01"), make([]byte, 32)...), 0, 0))
	f.Add(append(append([]byte("IBAU\x01"), make([]byte, 32)...), 1, 0, 3, 'n', 'o', '!'))
	f.Fuzz(func(t *testing.T, in []byte) {
		if err := Dial(fuzzConn{bytes.NewReader(in)}, "p", New([]byte("s"))); err == nil {
			t.Fatal("a server that does not know the secret was accepted")
		}
		_ = Dial(fuzzConn{bytes.NewReader(in)}, "p", Secret{})
	})
}
