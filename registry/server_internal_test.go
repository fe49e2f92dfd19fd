package registry

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/ibisgo/ibis/internal/poolauth"
)

const internalTimeout = 30 * time.Second

func internalServer(t *testing.T, opts ...ServerOption) *Server {
	t.Helper()
	opts = append([]ServerOption{WithServerLogger(zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))}, opts...)
	s, err := StartEmbedded("127.0.0.1:0", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// rawClient speaks the wire protocol by hand, to test what the Client
// never does.
type rawClient struct {
	t      *testing.T
	conn   net.Conn
	br     *bufio.Reader
	authed bool // the pool check ran (at the first send, for that message's pool)
}

func dialRaw(t *testing.T, s *Server) *rawClient {
	t.Helper()
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(internalTimeout)); err != nil {
		t.Fatal(err)
	}
	return &rawClient{t: t, conn: conn, br: bufio.NewReader(conn)}
}

func (r *rawClient) send(m *message) {
	r.t.Helper()
	if !r.authed {
		r.authed = true
		if err := poolauth.Dial(r.conn, m.Pool, poolauth.Secret{}); err != nil {
			r.t.Fatal(err)
		}
	}
	frame, err := encodeFrame(m)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.conn.Write(frame); err != nil {
		r.t.Fatal(err)
	}
}

// recv returns the next message other than a ping.
func (r *rawClient) recv() (*message, error) {
	for {
		body, err := readFrame(r.br, nil, DefaultMaxFrameSize)
		if err != nil {
			return nil, err
		}
		m, err := decodeMessage(body)
		if err != nil || m.Kind != kindPing {
			return m, err
		}
	}
}

// reply returns the reply to request id, skipping events.
func (r *rawClient) reply(id uint64) *message {
	r.t.Helper()
	for {
		m, err := r.recv()
		if err != nil {
			r.t.Fatalf("waiting for reply %d: %v", id, err)
		}
		if m.Kind == kindReply && m.ID == id {
			return m
		}
	}
}

// expectOwnDeath reads until the server closes the connection, which it
// must do right after the Died event of the member itself.
func (r *rawClient) expectOwnDeath(who Identifier) {
	r.t.Helper()
	var last *message
	for {
		m, err := r.recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			r.t.Fatalf("server did not close the connection: %v", err)
		}
		last = m
	}
	if last == nil || last.Kind != kindEvent || last.Event.Type != Died || last.Event.Member != who {
		r.t.Fatalf("the last message before the close was %+v, want the Died event of %v", last, who)
	}
}

// expectClosed reads until the server closes the connection.
func (r *rawClient) expectClosed() {
	r.t.Helper()
	if _, err := io.Copy(io.Discard, r.br); err != nil {
		r.t.Fatalf("server did not close the connection: %v", err)
	}
}

func (r *rawClient) join(pool string) Identifier {
	r.t.Helper()
	r.send(&message{Kind: kindJoin, ID: 1, Version: ProtocolVersion, Pool: pool})
	rep := r.reply(1)
	if rep.Code != codeNone || rep.Member == nil {
		r.t.Fatalf("join failed: %+v", rep)
	}
	return *rep.Member
}

func TestVersionMismatch(t *testing.T) {
	s := internalServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), internalTimeout)
	defer cancel()
	_, err := Join(ctx, s.Addr(), "v", func(c *clientConfig) { c.version = 99 })
	if !errors.Is(err, ErrVersion) {
		t.Fatalf("got %v, want ErrVersion", err)
	}
	if !strings.Contains(err.Error(), "version 99") || !strings.Contains(err.Error(), "version 3") {
		t.Fatalf("error does not name both versions: %v", err)
	}
}

func TestRawProtocolErrors(t *testing.T) {
	s := internalServer(t)

	r := dialRaw(t, s)
	r.send(&message{Kind: kindSequence, ID: 5, Name: "x"})
	if rep := r.reply(5); rep.Code != codeNotMember {
		t.Fatalf("request before join: %+v", rep)
	}
	r.join("raw")
	r.send(&message{Kind: kindJoin, ID: 2, Version: ProtocolVersion, Pool: "raw"})
	if rep := r.reply(2); rep.Code != codeInvalid {
		t.Fatalf("second join: %+v", rep)
	}
	r.send(&message{Kind: kindSequence, ID: 3})
	if rep := r.reply(3); rep.Code != codeInvalid {
		t.Fatalf("sequence without a name: %+v", rep)
	}
	r.send(&message{Kind: kindCancel, ID: 77}) // nothing waiting: ignored
	r.send(&message{Kind: kindSequence, ID: 4, Name: "x"})
	if rep := r.reply(4); rep.Code != codeNone || rep.Value != 0 {
		t.Fatalf("sequence: %+v", rep)
	}

	for name, m := range map[string]*message{
		"request without id":   {Kind: kindElect, Name: "x"},
		"server-only kind":     {Kind: kindReply, ID: 9},
		"join without id":      {Kind: kindJoin, Version: ProtocolVersion, Pool: "raw"},
		"event from a client":  {Kind: kindEvent, Event: &Event{Seq: 1, Type: Joined}},
		"ping from the client": {Kind: kindPing},
	} {
		t.Run(name, func(t *testing.T) {
			r := dialRaw(t, s)
			r.send(m)
			r.expectClosed()
		})
	}

	bad := dialRaw(t, s)
	bad.send(&message{Kind: kindJoin, ID: 1, Version: ProtocolVersion, Pool: ""})
	if rep := bad.reply(1); rep.Code != codeInvalid {
		t.Fatalf("join with an empty pool name: %+v", rep)
	}
	bad.send(&message{Kind: kindJoin, ID: 2, Version: ProtocolVersion, Pool: "p", PoolSize: -3})
	if rep := bad.reply(2); rep.Code != codeInvalid {
		t.Fatalf("join with a negative size: %+v", rep)
	}
}

// TestSilentMemberDies joins by hand and then says nothing: the server must
// declare the member dead after its death timeout, the others hear of it,
// and the silent member is sent its own Died event before its connection
// closes. The test waits for the events; it does not time them.
func TestSilentMemberDies(t *testing.T) {
	s := internalServer(t, WithHeartbeatInterval(100*time.Millisecond), WithDeathTimeout(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), internalTimeout)
	defer cancel()
	c, err := Join(ctx, s.Addr(), "quiet")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	silent := dialRaw(t, s)
	who := silent.join("quiet")
	for {
		select {
		case ev := <-c.Events():
			if ev.Type == Died && ev.Member == who {
				silent.expectOwnDeath(who)
				if n := len(c.Members()); n != 1 {
					t.Fatalf("members after the death: %v", c.Members())
				}
				return
			}
		case <-ctx.Done():
			t.Fatal("the silent member was never declared dead")
		}
	}
}

// TestSlowReaderIsDisconnected makes a member that never reads while a lot
// is sent to it: once the kernel's socket buffers are full, the server's
// queue for it grows past the limit (1 MiB here) and the server must drop
// the member rather than queue without bound.
func TestSlowReaderIsDisconnected(t *testing.T) {
	s := internalServer(t, WithMaxQueuedBytes(1))
	ctx, cancel := context.WithTimeout(context.Background(), internalTimeout)
	defer cancel()
	c, err := Join(ctx, s.Addr(), "slow")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := dialRaw(t, s)
	who := r.join("slow")
	big := strings.Repeat("x", MaxStringLength)
	for {
		if err := c.Signal(ctx, big, who); err != nil {
			if !errors.Is(err, ErrNotMember) {
				t.Fatalf("signal: %v", err)
			}
			break // the slow member is gone
		}
	}
	for ev := range c.Events() {
		if ev.Type == Died && ev.Member == who {
			return
		}
	}
	t.Fatalf("client ended before the slow member died: %v", c.Err())
}

func (s *Server) unjoinedConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unjoined
}

// Connections that have not joined are capped: one beyond the cap is
// closed at once; a join frees a place.
func TestUnjoinedConnectionsLimit(t *testing.T) {
	s := internalServer(t, WithMaxUnjoinedConnections(2), WithMaxUnjoinedPerSource(2))
	a := dialRaw(t, s)
	dialRaw(t, s)
	waitFor(t, "two unjoined connections", func() bool { return s.unjoinedConns() == 2 })
	dialRaw(t, s).expectClosed()
	if n := s.Stats().Connections; n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
	a.join("uj")
	waitFor(t, "one unjoined connection", func() bool { return s.unjoinedConns() == 1 })
	dialRaw(t, s).join("uj")
	if n := s.unjoinedConns(); n != 1 {
		t.Fatalf("%d unjoined connections, want 1", n)
	}
}

// A connection must join within the death timeout of connecting;
// heartbeats (or refused joins) do not keep an unjoined connection open.
func TestUnjoinedConnectionMustJoin(t *testing.T) {
	s := internalServer(t, WithHeartbeatInterval(20*time.Millisecond), WithDeathTimeout(100*time.Millisecond))
	r := dialRaw(t, s)
	r.authed = true
	if err := poolauth.Dial(r.conn, "uj", poolauth.Secret{}); err != nil {
		t.Fatal(err)
	}
	beat, err := encodeFrame(&message{Kind: kindHeartbeat})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		for {
			if _, err := r.conn.Write(beat); err != nil {
				return // closed by the server
			}
			time.Sleep(time.Millisecond)
		}
	})
	// Our heartbeats may make the closing server reset the connection
	// rather than end it cleanly; either is fine, only a timeout is not.
	if _, err := io.Copy(io.Discard, r.br); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("server did not close the unjoined connection: %v", err)
	}
	_ = r.conn.Close()
	waitFor(t, "connection gone", func() bool { return s.Stats().Connections == 0 && s.unjoinedConns() == 0 })
}
