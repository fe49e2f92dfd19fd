package registry_test

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/registry"
)

// observedServer starts a server whose log lines of level Warn and above
// are kept for the test to look at (and the others go to the test log).
func observedServer(t *testing.T, opts ...registry.ServerOption) (*registry.Server, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.WarnLevel)
	logger := zap.New(zapcore.NewTee(testLogger(t).Core(), core))
	return startServer(t, append([]registry.ServerOption{registry.WithServerLogger(logger)}, opts...)...), logs
}

// waitRefusal waits until the server logged a refusal (a Warn line whose
// message begins with "refused a connection") of a client on 127.0.0.1,
// whose fields mention every one of want, and returns it. The server logs
// after it answered, so the client may have its error first.
func waitRefusal(t *testing.T, logs *observer.ObservedLogs, want ...string) observer.LoggedEntry {
	t.Helper()
	var found observer.LoggedEntry
	eventually(t, "a refusal mentioning "+strings.Join(want, ", ")+" in the server log", func() bool {
		for _, e := range logs.All() {
			if !strings.HasPrefix(e.Message, "refused a connection") {
				continue
			}
			fields := e.ContextMap()
			remote, _ := fields["remote"].(string)
			if !strings.HasPrefix(remote, "127.0.0.1:") {
				continue
			}
			text := e.Message
			for _, v := range fields {
				if s, ok := v.(string); ok {
					text += " " + s
				}
			}
			all := true
			for _, w := range want {
				all = all && strings.Contains(text, w)
			}
			if all {
				found = e
				return true
			}
		}
		return false
	})
	return found
}

// refused joins pool at s with opts and requires the join to fail with an
// error matching target.
func refused(t *testing.T, addr, pool string, target error, opts ...registry.Option) error {
	t.Helper()
	opts = append([]registry.Option{registry.WithLogger(testLogger(t))}, opts...)
	c, err := registry.Join(testContext(t), addr, pool, opts...)
	if err == nil {
		_ = c.Close()
		t.Fatalf("join of %q was let in, want %v", pool, target)
	}
	if !errors.Is(err, target) {
		t.Fatalf("join of %q: %v, want an error matching %v", pool, err, target)
	}
	t.Logf("refused as it should be: %v", err)
	return err
}

func secret(s string) registry.Option { return registry.WithPoolSecret([]byte(s)) }

// TestSecretJoinsAndTalks: members with the right secret join, see each
// other's events, and use the pool; the refusals name their reason, and
// the server's log names each refusal with the client's address.
func TestSecretJoinsAndTalks(t *testing.T) {
	s, logs := observedServer(t, registry.WithServerSecret([]byte("s3cret")))
	ctx := testContext(t)
	a := join(t, s, "sec", secret("s3cret"))
	b := join(t, s, "sec", secret("s3cret"))
	waitEvent(t, a, "b's Joined", isEvent(registry.Joined, b.Identity()))
	if err := b.Signal(ctx, "hello", a.Identity()); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, a, "signal", func(ev registry.Event) bool { return ev.Type == registry.Signal }); ev.Name != "hello" {
		t.Fatalf("signal %v", ev)
	}

	err := refused(t, s.Addr(), "sec", registry.ErrUnauthenticated, secret("guess"))
	if !strings.Contains(err.Error(), "wrong proof") {
		t.Errorf("wrong secret: %v does not say why", err)
	}
	waitRefusal(t, logs, "sec", "wrong proof")
	err = refused(t, s.Addr(), "sec", registry.ErrUnauthenticated)
	if !strings.Contains(err.Error(), "gave none") {
		t.Errorf("no secret: %v does not say why", err)
	}
	waitRefusal(t, logs, "sec", "gave none")
	if st := s.Stats(); st.Members != 2 || st.Refused != 2 {
		t.Fatalf("stats after two refusals: %v", st)
	}
}

// TestPerPoolSecrets: pools listed with secrets of their own each take only
// theirs; a server that lists pools and has no server-wide secret does not
// serve the pools it does not list (rather than opening them to anyone).
func TestPerPoolSecrets(t *testing.T) {
	s, logs := observedServer(t, registry.WithPoolSecrets(map[string][]byte{"A": []byte("a"), "B": []byte("b"), "E": nil}))
	join(t, s, "A", secret("a"))
	join(t, s, "B", secret("b"))
	refused(t, s.Addr(), "A", registry.ErrUnauthenticated, secret("b"))
	waitRefusal(t, logs, "A", "wrong proof")
	refused(t, s.Addr(), "B", registry.ErrUnauthenticated, secret("a"))
	waitRefusal(t, logs, "B", "wrong proof")
	for _, pool := range []string{"C", "E"} {
		err := refused(t, s.Addr(), pool, registry.ErrUnauthenticated)
		if !strings.Contains(err.Error(), "not served") {
			t.Errorf("unlisted pool %s: %v does not say it is not served", pool, err)
		}
		waitRefusal(t, logs, pool, "not served")
		refused(t, s.Addr(), pool, registry.ErrUnauthenticated, secret("a"))
	}

	// With a server-wide secret the unlisted pools take it.
	s2 := startServer(t, registry.WithServerSecret([]byte("site")), registry.WithPoolSecrets(map[string][]byte{"A": []byte("a")}))
	join(t, s2, "A", secret("a"))
	join(t, s2, "C", secret("site"))
	refused(t, s2.Addr(), "A", registry.ErrUnauthenticated, secret("site"))
	refused(t, s2.Addr(), "C", registry.ErrUnauthenticated)
}

// TestClientSecretAgainstOpenServer: the check is mutual: a client with a
// secret does not join through a server that cannot prove it knows it.
func TestClientSecretAgainstOpenServer(t *testing.T) {
	s := startServer(t)
	err := refused(t, s.Addr(), "p", registry.ErrUnauthenticated, secret("mine"))
	if !strings.Contains(err.Error(), "cannot prove") {
		t.Fatalf("%v does not say the server could not prove it knows the secret", err)
	}
	join(t, s, "p") // the pool is open to those without a secret
}

// recordingProxy forwards connections to target and keeps what the
// clients sent, as someone on the path could.
type recordingProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	sent   [][]byte // per connection, in accept order
	wg     sync.WaitGroup
}

func startRecordingProxy(t *testing.T, target string) *recordingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{ln: ln, target: target}
	p.wg.Go(p.serve)
	t.Cleanup(func() {
		_ = ln.Close()
		p.wg.Wait()
	})
	return p
}

func (p *recordingProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		i := len(p.sent)
		p.sent = append(p.sent, nil)
		p.mu.Unlock()
		p.wg.Go(func() {
			_, _ = io.Copy(c, s)
			_ = c.Close()
		})
		p.wg.Go(func() {
			buf := make([]byte, 4096)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					p.mu.Lock()
					p.sent[i] = append(p.sent[i], buf[:n]...)
					p.mu.Unlock()
					if _, werr := s.Write(buf[:n]); werr != nil {
						break
					}
				}
				if err != nil {
					break
				}
			}
			_ = s.Close()
		})
	}
}

func (p *recordingProxy) recorded(i int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Clone(p.sent[i])
}

// TestReplayedHandshakeRefused records everything a real member sent (its
// pool check, join, requests and leave) and sends it again on a new
// connection: the server's fresh challenge makes the recorded proof wrong,
// so the replay is refused before its join is read.
func TestReplayedHandshakeRefused(t *testing.T) {
	s, logs := observedServer(t, registry.WithServerSecret([]byte("s3cret")))
	proxy := startRecordingProxy(t, s.Addr())
	c, err := registry.Join(testContext(t), proxy.ln.Addr().String(), "rp", secret("s3cret"), registry.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Sequence(testContext(t), "n"); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the member gone", func() bool { return s.Stats().Members == 0 })
	rec := proxy.recorded(0)
	joins := s.Stats().Joins

	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(testTimeout)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(rec); err != nil {
		t.Fatal(err)
	}
	answer, err := io.ReadAll(conn)
	if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("reading the server's answer to the replay: %v", err)
	}
	// The challenge (magic, version, nonce: 37 bytes), then the verdict:
	// 1, refused.
	if len(answer) < 38 || answer[37] != 1 {
		t.Fatalf("the server's answer to the replay %q is not a refusal", answer)
	}
	waitRefusal(t, logs, "rp", "wrong proof")
	if st := s.Stats(); st.Joins != joins || st.Members != 0 {
		t.Fatalf("the replay joined: %v", st)
	}
}

// tlsPair makes a throw-away CA with a certificate in a directory of its
// own and returns the server's and the client's configurations.
func tlsPair(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	s, c, _ := tlsFiles(t)
	return s, c
}

// tlsFiles is tlsPair that also returns the files.
func tlsFiles(t *testing.T) (server, client *tls.Config, files tlsconf.Files) {
	t.Helper()
	files, err := tlsconf.Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if server, err = files.Server(); err != nil {
		t.Fatal(err)
	}
	if client, err = files.Client(); err != nil {
		t.Fatal(err)
	}
	return server, client, files
}

// strangerTLS is the configuration of a client that trusts the pool's CA
// (files.CA) but whose own certificate another CA signed.
func strangerTLS(t *testing.T, files tlsconf.Files) *tls.Config {
	t.Helper()
	other, err := tlsconf.Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := tlsconf.Files{Cert: other.Cert, Key: other.Key, CA: files.CA}.Client()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestTLS: a client with a certificate of the pool's CA joins over TLS and
// talks; one whose certificate another CA signed is refused (and the
// server logs it with its address), and so is a server whose certificate
// the client's CA did not sign.
func TestTLS(t *testing.T) {
	srvTLS, cliTLS, files := tlsFiles(t)
	otherSrv, otherCli := tlsPair(t)
	s, logs := observedServer(t, registry.WithServerTLS(srvTLS))
	a := join(t, s, "t", registry.WithTLS(cliTLS))
	b := join(t, s, "t", registry.WithTLS(cliTLS))
	waitEvent(t, a, "b's Joined", isEvent(registry.Joined, b.Identity()))
	if v, err := b.Sequence(testContext(t), "n"); err != nil || v != 0 {
		t.Fatalf("sequence over TLS: %d, %v", v, err)
	}

	// A client whose certificate another CA signed: the server refuses it.
	err := refused(t, s.Addr(), "t", registry.ErrUnauthenticated, registry.WithTLS(strangerTLS(t, files)))
	if !strings.Contains(err.Error(), "refused this client's TLS certificate") {
		t.Errorf("stranger's certificate: %v does not say the server refused it", err)
	}
	waitRefusal(t, logs, "TLS handshake failed", "unknown authority")
	// Neither trusts the other.
	refused(t, s.Addr(), "t", registry.ErrUnauthenticated, registry.WithTLS(otherCli))

	other := startServer(t, registry.WithServerTLS(otherSrv))
	err = refused(t, other.Addr(), "t", registry.ErrUnauthenticated, registry.WithTLS(cliTLS))
	if !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted server: %v does not name the certificate", err)
	}
}

// TestTLSMismatch: a TLS client of a plain server, and a plain client of a
// TLS server, fail with a clear error (the server logs the first).
func TestTLSMismatch(t *testing.T) {
	srvTLS, cliTLS := tlsPair(t)
	plain, logs := observedServer(t)
	err := refused(t, plain.Addr(), "m", registry.ErrUnauthenticated, registry.WithTLS(cliTLS))
	if !strings.Contains(err.Error(), "TLS") {
		t.Errorf("TLS client of a plain server: %v", err)
	}
	waitRefusal(t, logs, "speaks TLS")

	// The TLS server waits for the TLS hello that never comes for 1.5
	// heartbeat intervals, at least a second.
	withTLS := startServer(t, registry.WithServerTLS(srvTLS), registry.WithHeartbeatInterval(50*time.Millisecond))
	err = refused(t, withTLS.Addr(), "m", registry.ErrRegistryLost)
	if !strings.Contains(err.Error(), "expect TLS") {
		t.Errorf("plain client of a TLS server: %v", err)
	}
}

// TestTLSAndSecret: both together; the secret is still checked inside TLS.
func TestTLSAndSecret(t *testing.T) {
	srvTLS, cliTLS := tlsPair(t)
	_, otherCli := tlsPair(t)
	s, logs := observedServer(t, registry.WithServerTLS(srvTLS), registry.WithServerSecret([]byte("both")))
	a := join(t, s, "ts", registry.WithTLS(cliTLS), secret("both"))
	b := join(t, s, "ts", registry.WithTLS(cliTLS), secret("both"))
	waitEvent(t, a, "b's Joined", isEvent(registry.Joined, b.Identity()))
	refused(t, s.Addr(), "ts", registry.ErrUnauthenticated, registry.WithTLS(cliTLS), secret("nope"))
	waitRefusal(t, logs, "ts", "wrong proof")
	refused(t, s.Addr(), "ts", registry.ErrUnauthenticated, registry.WithTLS(otherCli), secret("both"))
	waitRefusal(t, logs, "TLS handshake failed")
}

// TestPoolsPerSourceLimit: members from one address may be in at most n
// pools at once; a pool they leave no longer counts.
func TestPoolsPerSourceLimit(t *testing.T) {
	s, logs := observedServer(t, registry.WithMaxPoolsPerSource(2))
	a := join(t, s, "p1")
	b := join(t, s, "p1") // the same pool again is no new pool
	join(t, s, "p2")
	err := refused(t, s.Addr(), "p3", registry.ErrTooManyRequests)
	if !strings.Contains(err.Error(), "127.0.0.1") || !strings.Contains(err.Error(), "2 pools") {
		t.Errorf("refusal %v does not name the address and the limit", err)
	}
	eventually(t, "the refusal logged", func() bool {
		return logs.FilterMessageSnippet("limit per source").Len() > 0
	})
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	refused(t, s.Addr(), "p3", registry.ErrTooManyRequests) // p1 still has a member from here
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "p1 gone", func() bool { return s.Stats().Pools == 1 })
	join(t, s, "p3")
}

// TestMembersPerSourceLimit: at most n members from one address, over all
// pools; one that leaves makes room.
func TestMembersPerSourceLimit(t *testing.T) {
	s := startServer(t, registry.WithMaxMembersPerSource(3))
	a := join(t, s, "m1")
	join(t, s, "m1")
	join(t, s, "m2")
	err := refused(t, s.Addr(), "m1", registry.ErrTooManyRequests)
	if !strings.Contains(err.Error(), "3 members") {
		t.Errorf("refusal %v does not name the limit", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a gone", func() bool { return s.Stats().Members == 2 })
	join(t, s, "m3")

	// No limit.
	u := startServer(t, registry.WithMaxMembersPerSource(0), registry.WithMaxPoolsPerSource(-1))
	for range 5 {
		join(t, u, "u")
	}
}

// TestLongPoolNameRefused: a pool name longer than the pool check carries
// is refused before anything is sent.
func TestLongPoolNameRefused(t *testing.T) {
	s := startServer(t)
	_, err := registry.Join(testContext(t), s.Addr(), strings.Repeat("p", registry.MaxPoolName+1))
	mustErrorIs(t, err, registry.ErrInvalid)
	join(t, s, strings.Repeat("p", registry.MaxPoolName))
}
