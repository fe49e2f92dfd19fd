package registry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// probeTimeout bounds each step of a probe of one etcd endpoint (a connection
// and what is tried on it).
const probeTimeout = 2 * time.Second

// explain adds to err, a failure to get an answer from etcd in time, why no
// endpoint answered, as far as a TCP connection, an HTTP/2 preface and a TLS
// handshake of the front end's own can tell: gRPC's deadline hides that etcd
// was down, took only TLS clients, did not speak TLS, refused the front end's
// certificate or its CA etcd's, or was no etcd at all. The endpoints are
// probed at once, each in at most two steps of probeTimeout, and every one
// that failed is named. Other errors (etcd's own answers, such as a refused
// login) already say what was wrong and come back as they are.
func (e *etcdStore) explain(err error) error {
	code := status.Code(err)
	if !errors.Is(err, context.DeadlineExceeded) && code != codes.DeadlineExceeded && code != codes.Unavailable {
		return err
	}
	whys := make([]error, len(e.endpoints))
	var wg sync.WaitGroup
	for i, ep := range e.endpoints {
		wg.Go(func() { whys[i] = probeEndpoint(e.ctx, ep, e.s.cfg.etcdTLS) })
	}
	wg.Wait()
	var said []string
	for _, why := range whys {
		if why != nil {
			said = append(said, why.Error())
		}
	}
	if len(said) == 0 {
		return err
	}
	return fmt.Errorf("%w (%s)", err, strings.Join(said, "; "))
}

// probeEndpoint connects to ep as the front end's client would, with tc (nil:
// plain), and returns what went wrong, or nil if nothing did.
func probeEndpoint(ctx context.Context, ep string, tc *tls.Config) error {
	if scheme, rest, ok := strings.Cut(ep, "://"); ok {
		if scheme != "http" && scheme != "https" {
			return nil // a unix socket: nothing a TCP probe can tell
		}
		ep = rest
	}
	host, _, err := net.SplitHostPort(ep)
	if err != nil {
		return fmt.Errorf("etcd endpoint %q: %w", ep, err)
	}
	if tc == nil {
		return probePlain(ctx, ep)
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	conn, err := dialProbe(ctx, ep)
	if err != nil {
		return err
	}
	defer conn.Close()
	cfg := tc.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	tconn := tls.Client(conn, cfg)
	if err := tconn.HandshakeContext(ctx); err != nil {
		return fmt.Errorf("TLS with etcd at %s: %w", ep, err)
	}
	// TLS 1.3: the server checks the client's certificate after the client's
	// handshake has ended, and says what it thought of it in an alert, while
	// a gRPC server that took it sends its settings.
	if _, err := tconn.Read(make([]byte, 1)); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			return fmt.Errorf("TLS with etcd at %s: %w", ep, err)
		}
	}
	return nil
}

// dialProbe opens a TCP connection to ep for one step of a probe: its reads
// and writes end at ctx's deadline, and it is closed when ctx is cancelled
// (a front end closing does not wait for its probes).
func dialProbe(ctx context.Context, ep string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", ep)
	if err != nil {
		return nil, err
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	return &probeConn{Conn: conn, stop: context.AfterFunc(ctx, func() { _ = conn.Close() })}, nil
}

// probeConn is a probe's connection, closed by its context's end as well.
type probeConn struct {
	net.Conn
	stop func() bool
}

func (c *probeConn) Close() error {
	c.stop()
	return c.Conn.Close()
}

// probePlain tells why plain gRPC got no answer from ep. A gRPC server (etcd)
// answers an HTTP/2 client's preface with its settings. An etcd that takes
// only TLS clients answers it otherwise, and a TLS handshake that completes
// shows it; anything else that answers is no etcd client port. Silence and a
// closed connection say nothing certain: an etcd that is stopped, not ready
// yet (no quorum) or shutting down does the same, so they are only reported.
func probePlain(ctx context.Context, ep string) error {
	hctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	conn, err := dialProbe(hctx, ep)
	if err != nil {
		return err
	}
	reply, err := http2Reply(conn)
	_ = conn.Close()
	switch {
	case err == nil:
		return nil // it speaks HTTP/2: nothing a probe can add
	case len(reply) == 0 && !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET):
		// Neither closed (EOF) nor reset, as a server that closes with the preface
		// unread does: silence.
		return fmt.Errorf("%s took the connection but did not answer an HTTP/2 client within %v "+
			"(an etcd that is stopped or has no quorum yet, or no etcd client port): %w", ep, probeTimeout, err)
	}
	ctx, cancel = context.WithTimeout(ctx, probeTimeout) // a step of its own
	defer cancel()
	tconn, terr := dialProbe(ctx, ep)
	if terr != nil {
		return terr
	}
	defer tconn.Close()
	//nolint:gosec // a probe: nothing is sent over it, only whether etcd speaks TLS
	probe := tls.Client(tconn, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12})
	if probe.HandshakeContext(ctx) == nil {
		return fmt.Errorf("etcd at %s takes TLS clients only: the front end needs etcd's CA (WithEtcdTLS, ibis-registry -etcd-ca)", ep)
	}
	if len(reply) > 0 {
		return fmt.Errorf("%s is no etcd client port: it answered an HTTP/2 client with %q", ep, reply)
	}
	return fmt.Errorf("%s closed the connection of an HTTP/2 client (an etcd shutting down, or no etcd client port)", ep)
}

// http2Preface is what an HTTP/2 client sends first (RFC 9113 3.4): the
// connection preface and an empty SETTINGS frame.
const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + "\x00\x00\x00\x04\x00\x00\x00\x00\x00"

// http2Reply sends an HTTP/2 client's preface on conn and reads the first
// frame header of the answer: nil when it is the server's SETTINGS, as the
// protocol requires; otherwise an error and what came back (at most 9
// bytes, shown as text where it is some).
func http2Reply(conn net.Conn) ([]byte, error) {
	if _, err := io.WriteString(conn, http2Preface); err != nil {
		return nil, err
	}
	var head [9]byte
	n, err := io.ReadFull(conn, head[:])
	if err == nil && head[3] == 0x4 { // a frame of type SETTINGS
		return nil, nil
	}
	if err == nil || errors.Is(err, io.ErrUnexpectedEOF) {
		return head[:n], fmt.Errorf("not an HTTP/2 server's settings")
	}
	return head[:n], err
}
