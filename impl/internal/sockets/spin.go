package sockets

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// Polling reads. A goroutine that reads an empty socket parks in Go's network poller
// and is woken by epoll when data arrives; every small message pays that wake-up, and a
// large one pays it repeatedly (while the reader sleeps, the sender fills the socket
// buffers and parks in turn). A SpinReader polls for a bounded time before it parks, as
// MPI's TCP transport does, both for the next message and within one: a reader that
// sleeps at the start of a message is what lets the sender stall. Polling costs a core,
// so it adapts: a connection whose poll ran out goes cold and parks at once until it is
// woken within Rewarm spins of parking, and at most maxSpinners readers of a process
// (half its Ps, at least one) poll at a time. Only plain TCP sockets poll; a TLS
// connection, or a spin of 0 (tcp.spin, nio.spin), reads the connection as it is.
// docs/PERFORMANCE.md, "Polling reads", has the figures.

// Rewarm is how many spins a cold poller's wait may last for it to poll again.
const Rewarm = 4

// DefaultSpin is how long a reader polls when the implementation's property does not
// say.
const DefaultSpin = 20 * time.Microsecond

// maxSpin bounds the property: beyond a millisecond polling only burns a core.
const maxSpin = time.Millisecond

// SpinFrom reads an implementation's polling property (a Go duration, "0" for none)
// from cfg, DefaultSpin when it is unset; impl names the implementation and env the
// environment variable of the property, for the error.
func SpinFrom(cfg *ipl.Config, impl, property, env string) (time.Duration, error) {
	v := cfg.Property(property)
	if v == "" {
		return DefaultSpin, nil
	}
	d, err := time.ParseDuration(v)
	if v == "0" {
		d, err = 0, nil
	}
	if err != nil || d < 0 || d > maxSpin {
		return 0, fmt.Errorf("%s: %w: property %s (or $%s) = %q: want a duration from 0 to %s, such as 20us", impl, ipl.ErrInvalidArgument, property, env, v, maxSpin)
	}
	return d, nil
}

// spinners counts the readers polling now.
var spinners atomic.Int32

// maxSpinners bounds spinners.
var maxSpinners = int32(max(1, runtime.GOMAXPROCS(0)/2))

// TrySpin claims one of the process's polling slots for a poller of its own (impl/nio's
// event loops poll through it, SpinReader does too), so that pollers of every kind
// together keep to maxSpinners; false when all are taken. EndSpin gives the slot back.
func TrySpin() bool {
	if spinners.Add(1) <= maxSpinners {
		return true
	}
	spinners.Add(-1)
	return false
}

// EndSpin gives back a slot TrySpin claimed.
func EndSpin() { spinners.Add(-1) }

// SpinReader reads a TCP connection, polling it for up to a spin before parking. One
// goroutine reads it at a time.
type SpinReader struct {
	c    *net.TCPConn
	rc   syscall.RawConn
	spin time.Duration
	cold bool // the last poll ran out: park at once until a wait is short

	// The read under way, kept here so that the function given to the raw
	// connection (readFd, bound once) needs no closure allocated per read.
	readFd   func(fd uintptr) bool
	p        []byte
	n        int
	rerr     error
	parkedAt time.Time
}

// NewSpinReader returns a reader of c that polls for up to spin before it parks, or c
// itself when spin is not positive or c is not a plain TCP connection (a TLS
// connection decrypts in its own reads).
func NewSpinReader(c net.Conn, spin time.Duration) io.Reader {
	tc, ok := c.(*net.TCPConn)
	if !ok || spin <= 0 {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	s := &SpinReader{c: tc, rc: rc, spin: spin}
	s.readFd = s.poll
	return s
}

// Read reads what the socket holds, polling for up to the spin while it holds
// nothing. Deadlines and Close end it as they end a read of the connection itself
// (while it polls, within the spin).
func (s *SpinReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.p, s.n, s.rerr, s.parkedAt = p, 0, nil, time.Time{}
	err := s.rc.Read(s.readFd)
	n, rerr := s.n, s.rerr
	s.p, s.rerr = nil, nil
	if err != nil {
		return 0, err
	}
	if rerr != nil && !errors.Is(rerr, io.EOF) {
		rerr = &net.OpError{Op: "read", Net: "tcp", Source: s.c.LocalAddr(), Addr: s.c.RemoteAddr(), Err: rerr}
	}
	return n, rerr
}

// poll is the raw connection's read function for Read: it reads s.p into s.n and
// s.rerr, polling while the socket holds nothing, and reports false to park.
func (s *SpinReader) poll(fd uintptr) bool {
	if s.cold && !s.parkedAt.IsZero() && time.Since(s.parkedAt) < Rewarm*s.spin {
		s.cold = false // woken soon after parking: a poll would have caught it
	}
	polling := false
	defer func() {
		if polling {
			EndSpin()
		}
	}()
	var start time.Time
	for {
		m, err := syscall.Read(int(fd), s.p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			switch {
			case polling && time.Since(start) < s.spin:
				continue
			case polling:
				s.cold = true // the poll ran out: this connection is slow for now
			case !s.cold:
				if TrySpin() {
					polling, start = true, time.Now()
					continue
				}
				// others poll
			}
			s.parkedAt = time.Now()
			return false // park in the poller until readable
		case err != nil:
			s.rerr = os.NewSyscallError("read", err)
		case m == 0:
			s.rerr = io.EOF
		}
		s.n = max(m, 0)
		return true
	}
}
