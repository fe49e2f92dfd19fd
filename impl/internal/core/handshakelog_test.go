package core

import (
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestLogIncomingFailure: an incoming connection that only ended (closed here, EOF or a
// reset from the peer: a pool's shutdown) is logged at debug level; one whose peer said
// something wrong or nothing in time stays a warning.
func TestLogIncomingFailure(t *testing.T) {
	remote := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
	for _, c := range []struct {
		err  error
		want zapcore.Level
	}{
		{fmt.Errorf("%w: reading header: %w", ErrHandshake, io.EOF), zap.DebugLevel},
		{fmt.Errorf("%w: reading header: %w", ErrHandshake, io.ErrUnexpectedEOF), zap.DebugLevel},
		{fmt.Errorf("%w: reading header: %w", ErrHandshake, &net.OpError{Op: "read", Err: net.ErrClosed}), zap.DebugLevel},
		{fmt.Errorf("poolauth: reading the hello: %w", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}), zap.DebugLevel},
		{fmt.Errorf("%w: not an Ibis-Go peer (magic %q)", ErrHandshake, "GET "), zap.WarnLevel},
		{fmt.Errorf("%w: reading header: %w", ErrHandshake, os.ErrDeadlineExceeded), zap.WarnLevel},
	} {
		core, logs := observer.New(zap.DebugLevel)
		LogIncomingFailure(zap.New(core), "dropping incoming connection", remote, c.err)
		if e := logs.All(); len(e) != 1 || e[0].Level != c.want {
			t.Errorf("%v: logged %v, want one line at %v", c.err, e, c.want)
		}
	}
}
