package launch

import (
	"bufio"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// coordinator lets the test know, without sleeping, when the sleeping children are running,
// and lets the failing child fail only then. Children dial it and send one line, "sleeper
// PID" or "failer PID".
type coordinator struct {
	t        *testing.T
	ln       net.Listener
	sleepers int

	mu       sync.Mutex
	conns    []net.Conn
	asleep   []net.Conn
	failer   net.Conn
	released bool
	closed   bool
	ready    chan struct{} // closed when all sleepers have registered
	done     chan struct{}
}

func newCoordinator(t *testing.T, sleepers int) *coordinator {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &coordinator{t: t, ln: ln, sleepers: sleepers, ready: make(chan struct{}), done: make(chan struct{})}
	go c.serve()
	t.Cleanup(c.close)
	return c
}

func (c *coordinator) addr() string { return c.ln.Addr().String() }

func (c *coordinator) serve() {
	defer close(c.done)
	for {
		conn, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.mu.Lock()
		c.conns = append(c.conns, conn)
		if c.closed {
			conn.Close()
		}
		c.mu.Unlock()
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			continue
		}
		c.mu.Lock()
		switch role, _, _ := strings.Cut(line, " "); role {
		case "sleeper":
			c.asleep = append(c.asleep, conn)
			if len(c.asleep) == c.sleepers {
				close(c.ready)
			}
		case "failer":
			c.failer = conn
		}
		c.releaseLocked()
		c.mu.Unlock()
	}
}

// releaseLocked lets the failer fail once every sleeper is running.
func (c *coordinator) releaseLocked() {
	if c.released || c.failer == nil || len(c.asleep) < c.sleepers {
		return
	}
	c.released = true
	c.failer.Write([]byte("go\n"))
}

// waitGone checks that every sleeper's process is gone: the kernel closes a dead process's
// socket, so reading it ends. The deadline only turns a leak into a failure instead of a hang.
func (c *coordinator) waitGone() {
	c.t.Helper()
	c.mu.Lock()
	asleep := append([]net.Conn(nil), c.asleep...)
	c.mu.Unlock()
	if len(asleep) != c.sleepers {
		c.t.Fatalf("%d sleepers registered, want %d", len(asleep), c.sleepers)
	}
	for i, conn := range asleep {
		conn.SetReadDeadline(time.Now().Add(time.Minute))
		if _, err := io.Copy(io.Discard, conn); err != nil {
			c.t.Fatalf("sleeper %d still alive: %v", i, err)
		}
	}
}

func (c *coordinator) close() {
	c.ln.Close()
	c.mu.Lock()
	c.closed = true
	for _, conn := range c.conns {
		conn.Close()
	}
	c.mu.Unlock()
	<-c.done
}
