package nio

import (
	"errors"
	"io"

	"golang.org/x/sys/unix"
)

// The event loop reads a busy socket itself (internal/inbox/posted.go): when
// a receiver waits for a large array with nothing buffered, its slice is lent to the
// connection's inbox and the socket is read straight into it; when gnet's read filled
// its buffer (more is likely to wait) the socket is read into pooled buffers that the
// inbox keeps without copying. gnet itself reads only into its own buffer, from which
// Conn.Read and Next copy: a second copy this file avoids. OnTraffic runs on the loop that owns the connection,
// so it may read(2) the descriptor itself once it has taken what gnet buffered
// (Next): gnet reads a connection only on that loop, between callbacks, and the
// socket is non-blocking (gnet's duplicate), so the read never waits. What stays
// unread keeps the descriptor readable, and gnet's level-triggered poller calls
// OnTraffic again for it.

// socketReader returns a read for inbox.Inbox.FillFrom on the descriptor fd: (0, nil)
// when the socket has nothing more now, io.EOF at its end.
func socketReader(fd int) func(p []byte) (int, error) {
	return func(p []byte) (int, error) {
		for {
			n, err := unix.Read(fd, p)
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case errors.Is(err, unix.EAGAIN):
				return 0, nil
			case err != nil:
				return 0, err
			case n == 0:
				return 0, io.EOF
			}
			return n, nil
		}
	}
}
