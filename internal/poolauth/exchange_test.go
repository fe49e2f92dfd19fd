package poolauth

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// tcpPair returns the two ends of a TCP connection on 127.0.0.1: both sides of the
// exchange write before they read (the client its hello's first bytes), which a real
// socket buffers and an unbuffered net.Pipe would not.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute) // every read ends, also if the exchange is wrong
	_ = server.SetDeadline(deadline)
	_ = client.SetDeadline(deadline)
	return server, client
}

// pair runs Accept and Dial over a TCP connection and returns both results.
func pair(t *testing.T, lookup Lookup, pool string, client Secret, record *bytes.Buffer) (acceptPool string, aerr, derr error) {
	t.Helper()
	s, c := tcpPair(t)
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
	srv, cli := tcpPair(t)
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
	srv, cli := tcpPair(t)
	go func() {
		_, _ = io.CopyN(io.Discard, cli, 37)
		_, _ = cli.Write([]byte("GET / HTTP/1.1\r\n\r\n......................................"))
		cli.Close()
	}()
	if _, err := Accept(srv, only("p", Secret{})); !errors.Is(err, ErrProtocol) {
		t.Errorf("accept of an HTTP request: %v, want ErrProtocol", err)
	}
	srv.Close()
	srv9, cli9 := tcpPair(t)
	go func() {
		_, _ = srv9.Write(append([]byte("IBAU"), 9))
		_, _ = io.Copy(io.Discard, srv9)
	}()
	if err := Dial(readFrom{cli9, bytes.NewReader(append(append([]byte("IBAU"), 9), make([]byte, 32)...))}, "p", Secret{}); !errors.Is(err, ErrProtocol) {
		t.Errorf("dial of a version-9 server: %v, want ErrProtocol", err)
	}
	cli9.Close()
	srv9.Close()
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

// replayed reads the bytes already taken from a connection first, then the connection.
type replayed struct {
	net.Conn
	r io.Reader
}

func (p replayed) Read(b []byte) (int, error) { return p.r.Read(b) }

// TestRefusePlainClient: a server that sees a plain hello's first bytes (where it
// expects TLS) refuses the client with its reason, which the client's Dial reports at
// once as ErrUnauthenticated.
func TestRefusePlainClient(t *testing.T) {
	srv, cli := tcpPair(t)
	defer srv.Close()
	defer cli.Close()
	done := make(chan error, 1)
	go func() {
		first := make([]byte, 4)
		if _, err := io.ReadFull(srv, first); err != nil {
			done <- err
			return
		}
		if !PlainHello(first) {
			done <- errors.New("the client's first bytes are not a plain hello")
			return
		}
		pool, err := Refuse(replayed{srv, io.MultiReader(bytes.NewReader(first), srv)}, "this member speaks TLS")
		if err == nil {
			err = &Refusal{Pool: pool}
		}
		done <- err
	}()
	err := Dial(cli, "p", Secret{})
	if !errors.Is(err, ErrUnauthenticated) || !bytes.Contains([]byte(err.Error()), []byte("this member speaks TLS")) {
		t.Errorf("dial of a refusing server: %v, want ErrUnauthenticated with the reason", err)
	}
	var r *Refusal
	if err := <-done; !errors.As(err, &r) || r.Pool != "p" {
		t.Errorf("refuse: %v, want a *Refusal for pool p", err)
	}
}

// TestTLSClientNamed: a server without TLS that gets a TLS ClientHello says so.
func TestTLSClientNamed(t *testing.T) {
	srv, cli := tcpPair(t)
	defer srv.Close()
	defer cli.Close()
	go func() { _, _ = cli.Write([]byte{0x16, 0x03, 0x01, 0x00, 0x20, 0x01, 0x00}) }()
	go io.Copy(io.Discard, cli)
	if _, err := Accept(srv, only("p", Secret{})); !errors.Is(err, ErrProtocol) || !bytes.Contains([]byte(err.Error()), []byte("speaks TLS")) {
		t.Errorf("accept of a TLS client: %v, want ErrProtocol saying the client speaks TLS", err)
	}
}
