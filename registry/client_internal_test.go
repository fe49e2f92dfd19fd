package registry

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// A server that accepts the connection (and even pings) but never answers
// the join: Join must give up with ErrRegistryLost rather than wait for
// ever.
func TestJoinGivesUpOnSilentServer(t *testing.T) {
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
		open := func(string) (poolauth.Secret, bool) { return poolauth.Secret{}, true }
		if _, err := poolauth.Accept(conn, open); err != nil {
			return
		}
		wg.Go(func() { _, _ = io.Copy(io.Discard, conn) })
		// Ping until the client hangs up: pings extend the wait for the
		// join reply, but not beyond joinPatience times its timeout.
		for {
			if _, err := conn.Write(ping); err != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	// The context would wait much longer: the join reply timeout must end
	// the wait.
	ctx, cancel := context.WithTimeout(context.Background(), internalTimeout)
	defer cancel()
	_, err = Join(ctx, ln.Addr().String(), "silent", func(c *clientConfig) { c.joinTimeout = 100 * time.Millisecond })
	if !errors.Is(err, ErrRegistryLost) || !strings.Contains(err.Error(), "no join reply from the server within") {
		t.Fatalf("got %v, want ErrRegistryLost for a missing join reply", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Join waited for its context, not for the join reply timeout")
	}
}

// cancel must never block the caller, even while the writer is stuck on a
// full connection and the request queue is full; and the cancel must
// still reach the server after its request.
func TestCancelDoesNotBlockAndFollowsItsRequest(t *testing.T) {
	cliEnd, srvEnd := net.Pipe()
	defer srvEnd.Close()
	cfg := defaultClientConfig()
	cfg.joinTimeout = time.Hour // the fake server never replies
	c, sess := newTestClient(cliEnd, cfg)
	defer c.shutdown(ErrClosed)
	if err := srvEnd.SetDeadline(time.Now().Add(internalTimeout)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(srvEnd)

	ctx, cancel := context.WithTimeout(context.Background(), internalTimeout)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.shutdown(ErrClosed) // ends the calls below

	// A request larger than the writer's buffer: reading only its header
	// leaves the writer blocked in the middle of writing it.
	big := strings.Repeat("b", 16<<10)
	wg.Go(func() { _, _ = c.Sequence(ctx, big) })
	var hdr [frameHeaderSize]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		t.Fatal(err)
	}
	// The lookup is queued behind it, then the queue fills up.
	lctx, lcancel := context.WithCancel(ctx)
	lookupDone := make(chan error, 1)
	go func() {
		_, _, err := c.Lookup(lctx, "name")
		lookupDone <- err
	}()
	waitFor(t, "lookup queued", func() bool { return len(sess.out) == 1 })
	for range cap(sess.out) + 2 {
		wg.Go(func() { _, _ = c.Sequence(ctx, big) })
	}
	waitFor(t, "request queue full", func() bool { return len(sess.out) == cap(sess.out) })

	lcancel()
	select {
	case err := <-lookupDone:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("lookup: %v", err)
		}
	case <-time.After(internalTimeout):
		t.Fatal("Lookup did not return when its context ended: sending the cancel blocked")
	}

	// Now let everything through: the lookup must come before its cancel.
	if _, err := io.ReadFull(br, make([]byte, binary.BigEndian.Uint32(hdr[:]))); err != nil {
		t.Fatal(err)
	}
	var lookupID uint64
	for {
		body, err := readFrame(br, nil, DefaultMaxFrameSize)
		if err != nil {
			t.Fatalf("no cancel frame arrived: %v", err)
		}
		m, err := decodeMessage(body)
		if err != nil {
			t.Fatal(err)
		}
		switch m.Kind {
		case kindLookup:
			lookupID = m.ID
		case kindCancel:
			if lookupID == 0 || m.ID != lookupID {
				t.Fatalf("cancel of request %d, but the lookup (id %d) was not sent before it", m.ID, lookupID)
			}
			return
		}
	}
}

// newTestClient makes a client whose one session runs over conn, as if it
// had joined, without a supervisor: when the session ends, nothing
// reconnects.
func newTestClient(conn net.Conn, cfg clientConfig) (*Client, *session) {
	c := newClient(cfg, "test")
	go c.dispatch()
	s := c.newSession(conn)
	s.start()
	c.sess = s
	return c, s
}

// waitFor polls cond until it holds, for state without an event to wait on.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(internalTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition never held: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// writeBatch writes the cancels it took after every request queued before
// them, even when the writer wakes for the cancel first.
func TestWriteBatchPutsCancelsLast(t *testing.T) {
	c := newClient(defaultClientConfig(), "test")
	s := c.newSession(nil)
	frame := func(m *message) []byte {
		f, err := encodeFrame(m)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	s.out <- frame(&message{Kind: kindLookup, ID: 1, Name: "a"})
	s.out <- frame(&message{Kind: kindSequence, ID: 2, Name: "b"})
	s.cancels.Push(frame(&message{Kind: kindCancel, ID: 1}))
	var buf strings.Builder
	bw := bufio.NewWriter(&buf)
	if err := s.writeBatch(bw, nil); err != nil {
		t.Fatal(err)
	}
	r := strings.NewReader(buf.String())
	var got []msgKind
	for {
		body, err := readFrame(r, nil, DefaultMaxFrameSize)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		m, err := decodeMessage(body)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m.Kind)
	}
	if want := []msgKind{kindLookup, kindSequence, kindCancel}; !slices.Equal(got, want) {
		t.Fatalf("written %v, want %v", got, want)
	}
}
