package registry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// helloBytes is a client's hello of the pool check for an open pool (the
// nonce is not checked without a secret).
func helloBytes(pool string) []byte {
	b := []byte("IBAU\x01\x00\x00")
	binary.BigEndian.PutUint16(b[5:], uint16(len(pool)))
	b = append(b, pool...)
	b = append(b, make([]byte, poolauth.NonceSize)...)
	return append(b, 0)
}

// A client of protocol version 2, which sends its join at once, is closed,
// and the server's log says it is of an older version.
func TestOldClientRefused(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	s := internalServer(t, WithServerLogger(zap.New(core)))
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(internalTimeout))
	join, err := encodeFrame(&message{Kind: kindJoin, ID: 1, Version: 2, Pool: "old"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(join); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, conn); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("server did not close the connection: %v", err)
	}
	waitFor(t, "the refusal logged", func() bool {
		return logs.FilterMessageSnippet("refused").FilterFieldKey("reason").Len() > 0
	})
	e := logs.All()[0]
	if r, _ := e.ContextMap()["reason"].(string); !strings.Contains(r, "version 2 or older") {
		t.Fatalf("log %q %v does not name the old version", e.Message, e.ContextMap())
	}
	if st := s.Stats(); st.Joins != 0 || st.Refused != 1 {
		t.Fatalf("stats %v", st)
	}
}

// A server of protocol version 2 pings rather than begin with the pool
// check: Join fails with ErrVersion.
func TestOldServerRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ping, err := encodeFrame(&message{Kind: kindPing})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = conn.Write(bytes.Repeat(ping, 10))
		_, _ = io.Copy(io.Discard, conn)
	})
	ctx, cancel := context.WithTimeout(context.Background(), internalTimeout)
	defer cancel()
	_, err = Join(ctx, ln.Addr().String(), "p")
	if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "version 3") {
		t.Fatalf("join at a version-2 server: %v, want ErrVersion naming this version", err)
	}
}

// The join must be for the pool of the pool check, unless both are open.
func TestJoinOnlyTheCheckedPool(t *testing.T) {
	s := internalServer(t, WithPoolSecrets(map[string][]byte{"closed": []byte("k")}), WithServerSecret([]byte("site")))
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(internalTimeout))
	r := &rawClient{t: t, conn: conn, br: bufio.NewReader(conn), authed: true}
	if err := poolauth.Dial(conn, "other", poolauth.New([]byte("site"))); err != nil {
		t.Fatal(err)
	}
	r.send(&message{Kind: kindJoin, ID: 1, Version: ProtocolVersion, Pool: "closed"})
	if rep := r.reply(1); rep.Code != codeInvalid || !strings.Contains(rep.Error, "pool check was for") {
		t.Fatalf("join of another pool than the checked one: %+v", rep)
	}
	if st := s.Stats(); st.Members != 0 {
		t.Fatalf("stats %v", st)
	}
}

// The refusal log lets refusalLogBurst lines a second through, and says
// how many it left out.
func TestRefusalLogLimited(t *testing.T) {
	var l logLimiter
	now := time.Unix(1000, 0)
	for i := range refusalLogBurst {
		if ok, _ := l.allow(now); !ok {
			t.Fatalf("line %d not let through", i)
		}
	}
	for range 5 {
		if ok, _ := l.allow(now.Add(time.Millisecond)); ok {
			t.Fatal("a line beyond the burst let through")
		}
	}
	if ok, dropped := l.allow(now.Add(time.Second)); !ok || dropped != 5 {
		t.Fatalf("next second: %v, %d dropped", ok, dropped)
	}
}

// FuzzServerPoolCheck feeds arbitrary bytes to a server whose pools have
// secrets (one server-wide, and one pool with its own): nothing a client
// can send without the secret makes it a member, nor makes the server
// panic, hang or keep anything of the connection.
func FuzzServerPoolCheck(f *testing.F) {
	f.Add(helloBytes("p"))
	f.Add(append(helloBytes("own"), mustFrame(f, &message{Kind: kindJoin, ID: 1, Version: ProtocolVersion, Pool: "own"})...))
	withProof := append([]byte(nil), helloBytes("p")...)
	withProof[len(withProof)-1] = 1
	f.Add(append(withProof, make([]byte, poolauth.ProofSize)...))
	f.Add(mustFrame(f, &message{Kind: kindJoin, ID: 1, Version: 2, Pool: "p"}))
	f.Add([]byte{0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewServer(WithServerSecret([]byte("site")), WithPoolSecrets(map[string][]byte{"own": []byte("own")}))
		defer s.Close()
		srvEnd, cliEnd := net.Pipe()
		s.startConn(srvEnd)
		var wg sync.WaitGroup
		wg.Go(func() { _, _ = io.Copy(io.Discard, cliEnd) })
		_, _ = cliEnd.Write(data)
		_ = cliEnd.Close()
		wg.Wait()
		deadline := time.Now().Add(10 * time.Second)
		for s.Stats().Connections != 0 {
			if time.Now().After(deadline) {
				t.Fatal("server never dropped the connection")
			}
			time.Sleep(100 * time.Microsecond)
		}
		if st := s.Stats(); st.Joins != 0 || st.Members != 0 || st.Pools != 0 {
			t.Fatalf("a client without the secret got in: %v", st)
		}
		if n := s.unjoinedConns(); n != 0 {
			t.Fatalf("connection left %d unjoined behind", n)
		}
	})
}

// FuzzClientPoolCheck feeds arbitrary bytes to a client's pool check as
// if the server sent them: a client with a secret never passes it (no
// server bytes can prove the secret without knowing it), and no input
// makes the check panic or hang.
func FuzzClientPoolCheck(f *testing.F) {
	challenge := append([]byte("IBAU\x01"), make([]byte, poolauth.NonceSize)...)
	f.Add(append(append([]byte(nil), challenge...), 0, 0))
	f.Add(append(append([]byte(nil), challenge...), append([]byte{0, 1}, make([]byte, poolauth.ProofSize)...)...))
	f.Add(append(append([]byte(nil), challenge...), 1, 0, 4, 'n', 'o', 'p', 'e'))
	f.Add(mustFrame(f, &message{Kind: kindPing}))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, key := range []string{"s", ""} {
			cfg := defaultClientConfig()
			cfg.secret = poolauth.New([]byte(key))
			c := newClient(cfg, "fuzz")
			srvEnd, cliEnd := net.Pipe()
			var wg sync.WaitGroup
			wg.Go(func() {
				wg.Go(func() { _, _ = io.Copy(io.Discard, srvEnd) })
				_, _ = srvEnd.Write(data)
				_ = srvEnd.Close()
			})
			conn, err := c.secure(context.Background(), cliEnd, c.eps[0], "p")
			if err == nil {
				if key != "" {
					t.Fatalf("a server without the secret passed the client's check")
				}
				_ = conn.Close()
			} else if !errors.Is(err, ErrUnauthenticated) && !errors.Is(err, ErrVersion) && !errors.Is(err, ErrRegistryLost) {
				t.Fatalf("error %v matches none of the pool check's sentinels", err)
			}
			_ = cliEnd.Close()
			wg.Wait()
			c.endLife()
		}
	})
}
