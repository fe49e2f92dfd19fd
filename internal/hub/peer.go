package hub

import (
	"errors"
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// watchHangUp watches c, which the hub reads nothing from while a relay is set up,
// for the peer closing it: the returned channel is closed if the peer hung up. Calling
// stop ends the watch (it expires c's read deadline, which the caller sets again) and
// returns once the watch has ended. It never consumes a byte: bytes the peer sent
// early stay for the splice.
func watchHangUp(c net.Conn) (gone <-chan struct{}, stop func()) {
	ch := make(chan struct{})
	ended := make(chan struct{})
	sc, ok := c.(syscall.Conn)
	var rc syscall.RawConn
	var err error
	if ok {
		rc, err = sc.SyscallConn()
	}
	if !ok || err != nil {
		close(ended)
		return ch, func() {}
	}
	go func() {
		defer close(ended)
		var hungUp bool
		rerr := rc.Read(func(fd uintptr) bool {
			var b [1]byte
			n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				return false // wait until readable
			}
			hungUp = n == 0 || err != nil
			return true
		})
		if rerr == nil && hungUp {
			close(ch)
		}
	}()
	return ch, func() {
		_ = c.SetReadDeadline(time.Unix(1, 0))
		<-ended
	}
}
