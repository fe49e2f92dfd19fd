package core

import (
	"errors"
	"io"
	"net"
	"syscall"

	"go.uber.org/zap"
)

// LogIncomingFailure logs an incoming connection that failed before it was accepted (in
// the pool check or the handshake): a warning when the peer said something wrong or
// nothing in time, debug when the connection merely ended. A pool's shutdown has some of
// the latter: a member closes (its half-open connections read "use of closed network
// connection") while another dials it, or a dialler gives up its connect on its own close
// (the acceptor reads EOF). Warning about those made every successful run of a pool over
// several machines end in "bad handshake" and "pool check failed" lines.
func LogIncomingFailure(log *zap.Logger, msg string, remote net.Addr, err error) {
	level := zap.WarnLevel
	if connectionEnded(err) {
		level, msg = zap.DebugLevel, msg+" (the connection ended)"
	}
	log.Log(level, msg, zap.Stringer("remote", remote), zap.Error(err))
}

// connectionEnded tells whether err says only that the connection ended (closed here,
// closed or reset by the peer) rather than that the peer sent something wrong or stalled.
func connectionEnded(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED)
}
