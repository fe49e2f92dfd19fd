package core

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"go.uber.org/zap"
)

// closingConn accepts every packet and fails its Close with err.
type closingConn struct{ err error }

func (closingConn) WritePacket(net.Buffers) error { return nil }
func (c closingConn) Close() error                { return c.err }

// A TLS connection says goodbye with an alert of its own when it closes; when the
// receiver has already read our Close packet and gone, that alert meets a closed socket.
// The disconnect was clean all the same and must not fail (it failed a CI run: sor's
// finalize over TLS returned "tls: failed to send closeNotify alert ... broken pipe").
// Any other failure to close is still reported.
func TestCloseCleanPeerWentFirst(t *testing.T) {
	sp := &SendPort{log: zap.NewNop()}
	tlsGoodbye := fmt.Errorf("tls: failed to send closeNotify alert (but connection was closed anyway): %w",
		&net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)})
	for _, tc := range []struct {
		name    string
		closing error
		fails   bool
	}{
		{"clean", nil, false},
		{"already closed", net.ErrClosed, false},
		{"tls goodbye after the peer left", tlsGoodbye, false},
		{"reset", &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.ECONNRESET)}, false},
		{"other", errors.New("disk on fire"), true},
	} {
		oc := &sendConn{sp: sp, c: closingConn{tc.closing}}
		err := oc.closeClean()
		if (err != nil) != tc.fails {
			t.Errorf("%s: closeClean = %v, want failure %v", tc.name, err, tc.fails)
		}
	}
}
