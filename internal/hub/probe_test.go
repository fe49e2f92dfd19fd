package hub

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/testserve"
)

// prober listens on 127.0.0.1 and answers each connection with answer, until the test
// ends.
func prober(t *testing.T, answer func(net.Conn)) string {
	t.Helper()
	return testserve.Serve(t, answer)
}

// answering reads the magic the way a member's accept path does and answers.
func answering(t *testing.T) func(net.Conn) {
	return func(c net.Conn) {
		var magic [len(ProbeMagic)]byte
		if _, err := io.ReadFull(c, magic[:]); err != nil || string(magic[:]) != ProbeMagic {
			t.Errorf("probe magic %q, %v", magic, err)
			return
		}
		if err := AnswerProbe(c); err != nil {
			t.Errorf("AnswerProbe: %v", err)
		}
	}
}

func deadAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	_ = ln.Close()
	return a
}

// TestProbe: the hub's probe timeout is long here, so that a slow machine cannot make
// an answering address look unreachable; every unreachable case fails on its own.
func TestProbe(t *testing.T) {
	_, addr := startHub(t, WithProbeTimeout(patience))
	good := prober(t, answering(t))
	liar := prober(t, func(c net.Conn) {
		buf := make([]byte, len(ProbeMagic)+ProbeNonceSize)
		if _, err := io.ReadFull(c, buf); err == nil {
			buf[len(buf)-1] ^= 1
			_, _ = c.Write(buf[len(ProbeMagic):])
		}
	})
	hangUp := prober(t, func(c net.Conn) {
		buf := make([]byte, len(ProbeMagic)+ProbeNonceSize)
		_, _ = io.ReadFull(c, buf)
	})
	for _, tc := range []struct {
		name      string
		advertise []string
		want      bool
	}{
		{"none", nil, false},
		{"nobody listens", []string{deadAddr(t)}, false},
		{"wrong nonce", []string{liar}, false},
		{"hangs up", []string{hangUp}, false},
		{"answers", []string{good}, true},
		{"one of several answers", []string{deadAddr(t), liar, good}, true},
	} {
		m := register(t, addr, Registration{Pool: "p", Key: "k-" + tc.name, Advertise: tc.advertise})
		if m.Reachable() != tc.want {
			t.Errorf("%s: reachable %v, want %v", tc.name, m.Reachable(), tc.want)
		}
		if m.Observed() != m.conn.LocalAddr().String() {
			t.Errorf("%s: observed %q, want %q", tc.name, m.Observed(), m.conn.LocalAddr())
		}
	}
}

// An address that accepts and never answers costs the registration one probe timeout.
func TestProbeSilentAddress(t *testing.T) {
	_, addr := startHub(t, WithProbeTimeout(50*time.Millisecond))
	mute := prober(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
	m := register(t, addr, Registration{Pool: "p", Key: "k", Advertise: []string{mute}})
	if m.Reachable() {
		t.Error("a silent address counted as reachable")
	}
}

// AnswerProbe reads exactly the nonce: what follows stays unread.
func TestAnswerProbeReadsOnlyTheNonce(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	nonce := []byte("0123456789abcdef")
	go func() {
		_, _ = a.Write(append(append([]byte{}, nonce...), "tail"...))
	}()
	done := make(chan error, 1)
	go func() { done <- AnswerProbe(b) }()
	echo := make([]byte, ProbeNonceSize)
	if _, err := io.ReadFull(a, echo); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if string(echo) != string(nonce) {
		t.Fatalf("echo %q, want %q", echo, nonce)
	}
	tail := make([]byte, 4)
	if _, err := io.ReadFull(b, tail); err != nil || string(tail) != "tail" {
		t.Fatalf("after the probe: %q, %v; want the tail unread", tail, err)
	}
}
