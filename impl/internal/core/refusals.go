package core

import (
	"fmt"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/ipl"
)

// Refused connections (strangers, wrong secrets, TLS mismatches, garbage) are logged at
// a bounded rate: a scan or a misconfigured member that dials thousands of times must
// not flood the log. In each window of refusalWindow the first refusalBurst are logged
// in full; the rest are only counted, and the count is logged with the next refusal
// after the window (or when the instance closes) as one summary line.
const (
	refusalWindow = 10 * time.Second
	refusalBurst  = 5
)

// refusalLog logs refused connections at a bounded rate. Safe for concurrent use.
type refusalLog struct {
	mu         sync.Mutex
	now        func() time.Time
	start      time.Time // the current window's start
	logged     int       // refusals logged in full in the current window
	suppressed int       // refusals only counted since the last summary
	last       string    // the last suppressed refusal, for the summary
}

func newRefusalLog() *refusalLog { return &refusalLog{now: time.Now} }

// refused logs one refused connection (msg, the peer's address and why), or counts it
// when this window's burst is spent. A connection that merely ended (LogIncomingFailure
// logs it at debug level) is not counted.
func (r *refusalLog) refused(log *zap.Logger, msg string, remote net.Addr, why error) {
	if connectionEnded(why) {
		LogIncomingFailure(log, msg, remote, why)
		return
	}
	r.mu.Lock()
	now := r.now()
	if now.Sub(r.start) >= refusalWindow {
		r.summaryLocked(log)
		r.start, r.logged = now, 0
	}
	if r.logged >= refusalBurst {
		r.suppressed++
		r.last = fmt.Sprintf("%s from %v: %v", msg, remote, why)
		r.mu.Unlock()
		return
	}
	r.logged++
	r.mu.Unlock()
	log.Warn(msg, zap.Stringer("remote", remote), zap.Error(why))
}

// flush logs the summary of what is still counted (the instance closes).
func (r *refusalLog) flush(log *zap.Logger) {
	r.mu.Lock()
	r.summaryLocked(log)
	r.mu.Unlock()
}

func (r *refusalLog) summaryLocked(log *zap.Logger) {
	if r.suppressed == 0 {
		return
	}
	log.Warn("refused connections not logged one by one", zap.Int("count", r.suppressed),
		zap.Duration("since", r.now().Sub(r.start).Round(time.Millisecond)), zap.String("last", r.last))
	r.suppressed, r.last = 0, ""
}

// Refused logs a connection the transport dropped before it was accepted (a handshake
// it could not read), at the bounded rate of the other refusals (Acceptor).
func (in *Instance) Refused(remote net.Addr, why error) {
	in.refusals.refused(in.acceptLog, "dropping incoming connection", remote, why)
}

// refusePlain refuses, with a reason the dialling member reports, a plain client of a
// member that speaks TLS: first are the connection's first bytes, already read into pc.
func refusePlain(pc *prefixConn, first []byte) error {
	if !poolauth.PlainHello(first) {
		return nil
	}
	const reason = "this member speaks TLS and the dialling one does not: configure TLS (IBIS_TLS_CERT, IBIS_TLS_KEY, IBIS_TLS_CA) on every member or on none"
	pool, err := poolauth.Refuse(pc, reason)
	if err == nil {
		err = &poolauth.Refusal{Pool: pool, Reason: reason}
	}
	return fmt.Errorf("%w: a client without TLS: %w", ipl.ErrUnauthenticated, err)
}

// prefixConn is a connection whose first bytes were already read: Read returns them
// before reading on.
type prefixConn struct {
	net.Conn
	pre []byte
}

func (c *prefixConn) Read(b []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(b, c.pre)
		c.pre = c.pre[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}
