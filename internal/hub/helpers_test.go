package hub

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// patience bounds every wait of these tests: long enough for a loaded machine, so that
// no test depends on timing to pass.
const patience = 60 * time.Second

// startHub serves a hub on a kernel-picked port of 127.0.0.1 until the test ends.
func startHub(t *testing.T, opts ...ServerOption) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(opts...)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() {
		_ = s.Close()
		if err := <-served; !errors.Is(err, ErrClosed) {
			t.Errorf("Serve returned %v, want ErrClosed", err)
		}
	})
	return s, ln.Addr().String()
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	return ctx
}

func secretLookup(pool string, secret poolauth.Secret) poolauth.Lookup {
	return func(p string) (poolauth.Secret, bool) {
		if p != pool {
			return poolauth.Secret{}, false
		}
		return secret, true
	}
}

// register registers a member and closes it when the test ends.
func register(t *testing.T, hubAddr string, reg Registration, opts ...ClientOption) *Member {
	t.Helper()
	m, err := Register(testCtx(t), hubAddr, reg, opts...)
	if err != nil {
		t.Fatalf("Register at %s: %v", hubAddr, err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// accepted waits for m's next relayed connection.
func accepted(t *testing.T, m *Member) net.Conn {
	t.Helper()
	select {
	case c, ok := <-m.Accepted():
		if !ok {
			t.Fatalf("member ended: %v", m.Err())
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	case <-time.After(patience):
		t.Fatal("no relayed connection arrived")
	}
	return nil
}

// exchange sends size random bytes each way at once between a and b and checks that
// each side received exactly what the other sent.
func exchange(t *testing.T, a, b net.Conn, size int) {
	t.Helper()
	for _, c := range []net.Conn{a, b} {
		if _, ok := c.(*net.TCPConn); !ok {
			t.Fatalf("a relayed connection is a %T, want *net.TCPConn", c)
		}
		_ = c.SetDeadline(time.Now().Add(patience))
	}
	type sum = [sha256.Size]byte
	var wg sync.WaitGroup
	sent := make([]sum, 2)
	got := make([]sum, 2)
	errs := make([]error, 4)
	for i, pair := range [][2]net.Conn{{a, b}, {b, a}} {
		wg.Add(2)
		go func() {
			defer wg.Done()
			h := sha256.New()
			_, errs[2*i] = io.Copy(io.MultiWriter(pair[0], h), io.LimitReader(rand.Reader, int64(size)))
			copy(sent[i][:], h.Sum(nil))
		}()
		go func() {
			defer wg.Done()
			h := sha256.New()
			var n int64
			n, errs[2*i+1] = io.Copy(h, io.LimitReader(pair[1], int64(size)))
			if errs[2*i+1] == nil && n != int64(size) {
				errs[2*i+1] = io.ErrUnexpectedEOF
			}
			copy(got[i][:], h.Sum(nil))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("exchange: %v", err)
		}
	}
	for i := range sent {
		if sent[i] != got[i] {
			t.Fatalf("direction %d: the bytes received differ from those sent", i)
		}
	}
	for _, c := range []net.Conn{a, b} {
		_ = c.SetDeadline(time.Time{})
	}
}

// waitFor polls cond until it holds, failing after patience.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// rawMember registers key by hand on a control connection and then says nothing
// (no pings, no accept connections); interval is the keepalive interval it declares.
func rawMember(t *testing.T, hubAddr, pool string, secret poolauth.Secret, key string, interval time.Duration) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", hubAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(patience))
	if err := poolauth.Dial(c, pool, secret); err != nil {
		t.Fatal(err)
	}
	if err := writeFrame(c, frameRegister, registerMsg{interval: interval, key: key}.encode()); err != nil {
		t.Fatal(err)
	}
	f, err := readFrame(c)
	if err != nil || f.typ != frameRegistered {
		t.Fatalf("registration answer: %v, type %d", err, f.typ)
	}
	_ = c.SetDeadline(time.Time{})
	return c
}
