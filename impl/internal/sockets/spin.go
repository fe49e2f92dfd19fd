package sockets

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// Polling reads. A goroutine that reads an empty socket parks in Go's network
// poller and is woken by epoll when data arrives: a few microseconds each time (tens
// on a busy machine), paid by every chunk of a large message (the sender fills the
// socket buffer faster than the reader drains it, so the reader keeps finding it empty
// for a moment) and by every small message. MPI's TCP transport polls instead, which
// is most of why it moves a 1 MiB message over loopback about twice as fast as a
// parked Go reader (docs/PERFORMANCE.md, "Bulk tcp"). A SpinReader polls for a bounded
// time before it parks. Like MPI's one progress engine per process, at most
// maxSpinners readers of a process poll at a time (half its Ps, at least one): a
// reader that finds them all busy parks at once, so a port with a hundred senders
// cannot turn a hundred goroutines into busy loops, and a core is left for the work.

// spinners counts the readers polling now.
var spinners atomic.Int32

// maxSpinners bounds spinners.
var maxSpinners = int32(max(1, runtime.GOMAXPROCS(0)/2))

// SpinReader reads a TCP connection, polling it for up to a spin before parking.
type SpinReader struct {
	c    *net.TCPConn
	rc   syscall.RawConn
	spin time.Duration
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
	return &SpinReader{c: tc, rc: rc, spin: spin}
}

// Read reads what the socket holds, polling for up to the spin while it holds
// nothing. Deadlines and Close end it as they end a read of the connection itself
// (while it polls, within the spin).
func (s *SpinReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	err := s.rc.Read(func(fd uintptr) bool {
		polling := false
		defer func() {
			if polling {
				spinners.Add(-1)
			}
		}()
		var start time.Time
		for {
			m, err := syscall.Read(int(fd), p)
			switch {
			case err == syscall.EINTR:
				continue
			case err == syscall.EAGAIN:
				if !polling {
					if spinners.Add(1) > maxSpinners {
						spinners.Add(-1)
						return false // others poll: park in the poller until readable
					}
					polling, start = true, time.Now()
					continue
				}
				if time.Since(start) < s.spin {
					continue
				}
				return false // the spin ran out: park until readable
			case err != nil:
				rerr = os.NewSyscallError("read", err)
			case m == 0:
				rerr = io.EOF
			}
			n = max(m, 0)
			return true
		}
	})
	if err != nil {
		return 0, err
	}
	if rerr != nil && !errors.Is(rerr, io.EOF) {
		rerr = &net.OpError{Op: "read", Net: "tcp", Source: s.c.LocalAddr(), Addr: s.c.RemoteAddr(), Err: rerr}
	}
	return n, rerr
}
