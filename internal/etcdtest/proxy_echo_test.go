package etcdtest

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/testserve"
)

// echoServer accepts connections on 127.0.0.1 and writes back what it reads, until
// the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	return testserve.Serve(t, func(c net.Conn) { _, _ = io.Copy(c, c) })
}

// dialProxy connects to p and closes the connection when the test ends.
func dialProxy(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.Addr(), waitFor)
	if err != nil {
		t.Fatalf("dial %v: %v", p, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// send writes msg on c.
func send(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	_ = c.SetWriteDeadline(time.Now().Add(waitFor))
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatalf("write %q: %v", msg, err)
	}
}

// expectEcho reads msg back from c within the generous deadline.
func expectEcho(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(waitFor))
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != msg {
		t.Fatalf("echo of %q: got %q, %v", msg, buf, err)
	}
}

// expectSilence checks that nothing arrives on c for a while and the connection
// stays open. (A slow machine can only make a broken proxy pass here, never a
// working one fail.)
func expectSilence(t *testing.T, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	n, err := c.Read(make([]byte, 1))
	if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read through a cut link: %d bytes, %v; want it to hang", n, err)
	}
}

// expectClosed checks that c is closed by its peer (EOF or reset) within the
// generous deadline.
func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(waitFor))
	n, err := c.Read(make([]byte, 1))
	if n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read through a reset link: %d bytes, %v; want the connection closed", n, err)
	}
}

// expectRefused checks that a new connection to p is closed at once: the dial
// itself may already see the reset, or the first read sees it.
func expectRefused(t *testing.T, p *Proxy) {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.Addr(), waitFor)
	if err != nil {
		return
	}
	defer c.Close()
	expectClosed(t, c)
}

func TestProxyCutHoldsTrafficUntilHeal(t *testing.T) {
	p := NewProxy(t, echoServer(t))
	old := dialProxy(t, p)
	send(t, old, "before")
	expectEcho(t, old, "before")

	p.Cut()
	send(t, old, "during")
	expectSilence(t, old)
	held := dialProxy(t, p) // accepted, as a SYN would be answered, but not forwarded
	send(t, held, "held")
	expectSilence(t, held)

	p.Heal()
	expectEcho(t, old, "during")
	expectEcho(t, held, "held")
	send(t, old, "after")
	expectEcho(t, old, "after")
}

func TestProxyResetClosesUntilHeal(t *testing.T) {
	p := NewProxy(t, echoServer(t))
	old := dialProxy(t, p)
	send(t, old, "before")
	expectEcho(t, old, "before")

	p.Reset()
	expectClosed(t, old)
	expectRefused(t, p)

	p.Heal()
	fresh := dialProxy(t, p)
	send(t, fresh, "after")
	expectEcho(t, fresh, "after")
}

func TestProxyTargetDownClosesClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	p := NewProxy(t, target)
	expectRefused(t, p)
}
