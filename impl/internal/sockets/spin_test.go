package sockets

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := ln.Accept()
		ch <- res{c, err}
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { a.Close(); r.c.Close() })
	return a, r.c
}

func TestSpinReaderMovesEverything(t *testing.T) {
	a, b := tcpPair(t)
	r := NewSpinReader(b, time.Millisecond)
	if _, ok := r.(*SpinReader); !ok {
		t.Fatalf("a TCP connection got a %T", r)
	}
	want := make([]byte, 4<<20)
	for i := range want {
		want[i] = byte(i * 7)
	}
	go func() {
		for off := 0; off < len(want); off += 100_000 { // in pieces, with pauses
			_, _ = a.Write(want[off:min(off+100_000, len(want))])
			time.Sleep(time.Duration(off%3) * time.Millisecond)
		}
		a.Close()
	}()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, not the %d written", len(got), len(want))
	}
	if n := spinners.Load(); n != 0 {
		t.Fatalf("%d readers still counted as polling", n)
	}
}

func TestSpinReaderDeadlineAndClose(t *testing.T) {
	_, b := tcpPair(t)
	r := NewSpinReader(b, 50*time.Microsecond)
	_ = b.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := r.Read(make([]byte, 10)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a read past its deadline: %v", err)
	}
	_ = b.SetReadDeadline(time.Time{})
	done := make(chan error, 1)
	go func() {
		_, err := r.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(5 * time.Millisecond) // let it park (the test passes either way)
	b.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("a read of a closed connection: %v", err)
	}
	if n := spinners.Load(); n != 0 {
		t.Fatalf("%d readers still counted as polling", n)
	}
}

func TestSpinReaderResetIsAnError(t *testing.T) {
	a, b := tcpPair(t)
	_ = a.(*net.TCPConn).SetLinger(0) // close with a reset
	a.Close()
	_, err := io.ReadAll(NewSpinReader(b, time.Millisecond))
	var op *net.OpError
	if err == nil || !errors.As(err, &op) {
		t.Fatalf("a reset connection: %v", err)
	}
}

func TestSpinReaderOff(t *testing.T) {
	_, b := tcpPair(t)
	if r := NewSpinReader(b, 0); r != b {
		t.Fatalf("spin 0 wrapped the connection in a %T", r)
	}
	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	if r := NewSpinReader(p1, time.Millisecond); r != p1 {
		t.Fatalf("a pipe got a %T", r)
	}
}
