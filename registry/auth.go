package registry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// Every connection begins with the handshakes, before a single frame (see
// "Trust" in the package doc): TLS first, if configured, then the pool
// check of internal/poolauth (challenge, hello, verdict), which proves
// both ends know the pool's secret, or, for an open pool, only names the
// pool. The server reads nothing else from a connection before the client
// passed both, and closes one that fails.

// reasonTLS is the reason logged for a failed TLS handshake; reasonNoHello
// for a client that sent nothing to a TLS server (a client without TLS
// waits for the pool check's challenge).
const (
	reasonTLS     = "TLS handshake failed"
	reasonNoHello = "the client sent no TLS hello (does it speak TLS?)"
)

// errRefused marks a connection that the server refused in the TLS
// handshake or the pool check, and has already logged.
var errRefused = errors.New("refused")

// authenticate runs the server's side of the handshakes on a new
// connection, by deadline. It returns nil once the client passed them
// (c.authPool is then the pool it proved it belongs to); otherwise the
// connection is to be closed: the client has been told why when the pool
// check could tell it, and the refusal has been logged with its address.
func (c *serverConn) authenticate(deadline time.Time) error {
	defer close(c.authDone)
	if err := c.conn.SetDeadline(deadline); err != nil {
		return fmt.Errorf("set handshake deadline: %w", err)
	}
	if tc, ok := c.conn.(*tls.Conn); ok {
		if hc, ok := tc.NetConn().(*helloConn); ok {
			hc.expectHello(deadline, c.s.helloWait())
		}
		if err := tc.Handshake(); err != nil {
			if hc, ok := tc.NetConn().(*helloConn); ok && !hc.got.Load() && errors.Is(err, os.ErrDeadlineExceeded) {
				return c.refuse("", reasonNoHello, err)
			}
			if connectionFailure(err) {
				return fmt.Errorf("no TLS handshake (the connection failed or timed out): %w", err)
			}
			lingerClose(tc.NetConn(), deadline)
			return c.refuse("", reasonTLS, err)
		}
	}
	head := &headRecorder{rw: c.conn}
	pool, err := poolauth.Accept(head, c.s.cfg.secretFor)
	if err != nil {
		var r *poolauth.Refusal
		switch {
		case errors.As(err, &r):
			return c.refuse(r.Pool, r.Reason, nil)
		case errors.Is(err, poolauth.ErrProtocol):
			return c.refuse(pool, head.explain(c.s.tls != nil), err)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("no pool check within %v (the death timeout) of connecting: %w", c.s.cfg.deathTimeout, err)
		}
		return fmt.Errorf("pool check: %w", err)
	}
	if err := c.conn.SetDeadline(time.Time{}); err != nil {
		return fmt.Errorf("clear handshake deadline: %w", err)
	}
	c.authOK, c.authPool = true, pool
	c.log.Debug("pool check passed", zap.String("pool", pool), zap.Bool("tls", c.s.tls != nil))
	return nil
}

// lingerClose ends the sending half of conn and reads what the peer still
// sends (the rest of its TLS handshake), for at most a second and until
// deadline, so that closing conn does not reset it before the peer has
// read the alert that says why.
func lingerClose(conn net.Conn, deadline time.Time) {
	if hc, ok := conn.(*helloConn); ok {
		conn = hc.Conn
	}
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return
	}
	_ = tc.CloseWrite()
	if limit := time.Now().Add(time.Second); limit.Before(deadline) {
		deadline = limit
	}
	_ = tc.SetReadDeadline(deadline)
	_, _ = io.Copy(io.Discard, io.LimitReader(tc, 64<<10))
}

// helloConn is the TCP connection under a TLS server connection. A TLS
// client sends its hello as soon as it has connected, and so does a client
// without TLS (the first bytes of the pool check's hello, which fail the TLS
// handshake at once); one that sends nothing (an older client waiting for the
// challenge, an idle connection) must send its first bytes within helloWait;
// the rest of the handshakes then has the connection's time to join.
type helloConn struct {
	net.Conn
	got    atomic.Bool
	joinBy time.Time // set by expectHello, before the handshake reads
}

// expectHello gives the client until hello for its first bytes, and until
// joinBy for everything else.
func (h *helloConn) expectHello(joinBy time.Time, wait time.Duration) {
	h.joinBy = joinBy
	if hello := time.Now().Add(wait); hello.Before(joinBy) {
		_ = h.Conn.SetReadDeadline(hello)
	}
}

func (h *helloConn) Read(p []byte) (int, error) {
	n, err := h.Conn.Read(p)
	if n > 0 && h.got.CompareAndSwap(false, true) && !h.joinBy.IsZero() {
		_ = h.Conn.SetReadDeadline(h.joinBy)
	}
	return n, err
}

// helloWait is how long a TLS server waits for a client's first bytes:
// one and a half heartbeat intervals, at least minHelloWait (a client on a
// loaded machine may take a while to send them), at most the death timeout.
func (s *Server) helloWait() time.Duration {
	return min(max(s.cfg.heartbeat*3/2, minHelloWait), s.cfg.deathTimeout)
}

// minHelloWait is the least time a client has for its first bytes.
const minHelloWait = 5 * time.Second

// headRecorder keeps the first bytes a client sent, to say what it is
// when they are not the pool check's hello.
type headRecorder struct {
	rw   io.ReadWriter
	head []byte
}

func (h *headRecorder) Read(p []byte) (int, error) {
	n, err := h.rw.Read(p)
	if k := min(n, 8-len(h.head)); k > 0 {
		h.head = append(h.head, p[:k]...)
	}
	return n, err
}

func (h *headRecorder) Write(p []byte) (int, error) { return h.rw.Write(p) }

// explain says what a client that did not send a hello seems to be.
func (h *headRecorder) explain(serverTLS bool) string {
	b := h.head
	switch {
	case len(b) >= 2 && b[0] == 0x16 && b[1] == 0x03 && !serverTLS:
		return "the client speaks TLS, and this server does not"
	case len(b) >= 5 && b[0] == 0 && (b[4]&0xf0 == 0x80 || b[4] == 0xde || b[4] == 0xdf):
		// A frame: a small length, then a msgpack map (a join).
		return fmt.Sprintf("the client speaks registry protocol version 2 or older, without the pool check; this server speaks %s",
			versionRange())
	}
	return "the client does not begin with the pool check (not an Ibis-Go client, or a version of it that is too old)"
}

// refuse logs a refusal with the client's address (at most refusalLogBurst
// lines a second), counts it, and returns the error that closes the
// connection.
func (c *serverConn) refuse(pool, reason string, detail error) error {
	c.s.refused.Add(1)
	if ok, dropped := c.s.refusalLog.allow(time.Now()); ok {
		fields := []zap.Field{zap.String("pool", pool), zap.String("reason", reason)}
		if detail != nil {
			fields = append(fields, zap.NamedError("detail", detail))
		}
		if dropped > 0 {
			fields = append(fields, zap.Int("notLogged", dropped))
		}
		msg := "refused a connection: pool check failed"
		if reason == reasonTLS || reason == reasonNoHello {
			msg = "refused a connection: TLS handshake failed"
		}
		c.log.Warn(msg, fields...)
	}
	return fmt.Errorf("%w: %s", errRefused, reason)
}

// versionRange says which protocol versions this server speaks.
func versionRange() string {
	if MinProtocolVersion == ProtocolVersion {
		return fmt.Sprintf("version %d", ProtocolVersion)
	}
	return fmt.Sprintf("versions %d to %d", MinProtocolVersion, ProtocolVersion)
}

// serverTLS returns the configuration the server uses: cfg with TLS 1.3 as
// the least version and a client certificate required.
func serverTLS(cfg *tls.Config) *tls.Config {
	if cfg == nil {
		return nil
	}
	cfg = cfg.Clone()
	cfg.MinVersion = max(cfg.MinVersion, tls.VersionTLS13)
	if cfg.ClientAuth != tls.RequireAnyClientCert {
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg
}

// clientTLS returns the configuration the client uses to reach addr: cfg
// with TLS 1.3 as the least version and, when cfg needs one, the server
// name taken from addr.
func clientTLS(cfg *tls.Config, addr string) *tls.Config {
	if cfg == nil {
		return nil
	}
	cfg = cfg.Clone()
	cfg.MinVersion = max(cfg.MinVersion, tls.VersionTLS13)
	if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			cfg.ServerName = host
		}
	}
	return cfg
}

// closeConn closes conn without waiting on it: a TLS connection is closed
// below TLS, so that no close-notify alert is written to a peer that may
// not be reading (closeWith runs with the server's lock held).
func closeConn(conn net.Conn) error {
	if tc, ok := conn.(*tls.Conn); ok {
		return tc.NetConn().Close()
	}
	return conn.Close()
}

// sourceOf returns the source address of a connection for the per-source
// limits: the IP address of the peer (the port varies per connection).
func sourceOf(conn net.Conn) string {
	a := conn.RemoteAddr()
	if a == nil {
		return "unknown"
	}
	if host, _, err := net.SplitHostPort(a.String()); err == nil {
		return host
	}
	return a.String()
}

// refusalLogBurst bounds the refusals logged per second, so that a flood
// of bad handshakes cannot flood the log; the next line logged says how
// many were left out.
const refusalLogBurst = 20

// logLimiter lets at most refusalLogBurst lines through per second.
type logLimiter struct {
	mu      sync.Mutex
	window  time.Time
	n       int
	dropped int
}

// allow says whether a line may be logged now, and how many were dropped
// since the last one that was.
func (l *logLimiter) allow(now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.window) >= time.Second {
		l.window, l.n = now, 0
	}
	if l.n >= refusalLogBurst {
		l.dropped++
		return false, 0
	}
	l.n++
	d := l.dropped
	l.dropped = 0
	return true, d
}

// secure runs the client's side of the handshakes on a new connection to
// front end ep, for pool, and returns the connection to use (raw, or TLS
// over it). It ends when the handshakes are done, the join reply timeout
// passes, or ctx ends; on failure it closes raw. Errors: ErrUnauthenticated
// for a refusal, a server that cannot prove it knows the secret, or a TLS
// failure that is not the connection's; ErrVersion for a server that does
// not begin with the pool check; else (the connection failed)
// ErrRegistryLost.
func (c *Client) secure(ctx context.Context, raw net.Conn, ep endpoint, pool string) (net.Conn, error) {
	conn, err := c.handshake(ctx, raw, ep, pool)
	if err != nil {
		_ = raw.Close()
		return nil, fmt.Errorf("pool check with %s: %w", ep.addr, err)
	}
	return conn, nil
}

func (c *Client) handshake(ctx context.Context, raw net.Conn, ep endpoint, pool string) (net.Conn, error) {
	deadline := time.Now().Add(c.cfg.joinTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := raw.SetDeadline(deadline); err != nil {
		return nil, fmt.Errorf("%w: set deadline: %w", ErrRegistryLost, err)
	}
	stop := context.AfterFunc(ctx, func() { _ = raw.SetDeadline(time.Unix(1, 0)) })
	conn := raw
	var err error
	if ep.tls != nil {
		tc := tls.Client(raw, ep.tls)
		if herr := tc.Handshake(); herr != nil {
			err = tlsError("TLS handshake with the registry", herr)
		}
		conn = tc
	}
	if err == nil {
		err = poolauth.Dial(conn, pool, c.cfg.secret)
		switch {
		case errors.Is(err, ErrUnauthenticated) && strings.Contains(err.Error(), busyReason):
			// Not a failed check: the server is at a limit of connections
			// that have not joined yet (server_unjoined.go).
			_, why, _ := strings.Cut(err.Error(), busyReason)
			err = fmt.Errorf("%w: %w: the registry at %s refused the connection: %s", ErrTooManyRequests, errBusy, ep.addr, why)
		case err == nil, errors.Is(err, ErrUnauthenticated):
		case errors.Is(err, poolauth.ErrProtocol):
			err = fmt.Errorf("%w: the registry does not speak this client's protocol version %d, which begins with the pool check "+
				"(it is older, or not an Ibis-Go registry): %w", ErrVersion, ProtocolVersion, err)
		case ep.tls != nil:
			err = tlsError("pool check", err)
		case errors.Is(err, io.EOF):
			err = fmt.Errorf("%w: the server closed the connection before the pool check (does it expect TLS, "+
				"or refuse connections from this address?): %w", ErrRegistryLost, err)
		default:
			err = fmt.Errorf("%w: %w", ErrRegistryLost, err)
		}
	}
	if !stop() && (err == nil || !errors.Is(err, ErrUnauthenticated) && !errors.Is(err, ErrVersion) && !errors.Is(err, errBusy)) {
		if err == nil {
			return nil, fmt.Errorf("%w: %w", ErrRegistryLost, ctx.Err())
		}
		return nil, fmt.Errorf("%w: %w (%v)", ErrRegistryLost, ctx.Err(), err)
	}
	if err != nil {
		return nil, err
	}
	if err := raw.SetDeadline(time.Time{}); err != nil {
		return nil, fmt.Errorf("%w: clear deadline: %w", ErrRegistryLost, err)
	}
	return conn, nil
}

// tlsError classifies an error of a TLS connection: one of the connection
// itself (it broke, timed out, was closed) is ErrRegistryLost, like any
// other connection failure; anything else (a certificate the peer or this
// side does not trust, a peer that does not speak TLS) is
// ErrUnauthenticated, which is final.
func tlsError(what string, err error) error {
	if connectionFailure(err) {
		return fmt.Errorf("%w: %s: %w", ErrRegistryLost, what, err)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" {
		return fmt.Errorf("%w: %s: the registry refused this client's TLS certificate: %w", ErrUnauthenticated, what, err)
	}
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) {
		return fmt.Errorf("%w: %s: %w (does the registry use TLS?)", ErrUnauthenticated, what, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrUnauthenticated, what, err)
}

// connectionFailure tells whether err is a failure of the connection
// (ended, reset, timed out, closed) rather than of what was said on it.
func connectionFailure(err error) bool {
	var op *net.OpError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, os.ErrDeadlineExceeded),
		errors.Is(err, net.ErrClosed), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED):
		return true
	case errors.As(err, &op) && op.Op != "remote error":
		return true
	}
	return false
}
