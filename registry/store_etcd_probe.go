package registry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// probeTimeout bounds each step of a probe of one etcd endpoint.
const probeTimeout = 2 * time.Second

// explain adds to err, a failure to get an answer from etcd in time, why no
// endpoint answered, as far as a TCP connection and a TLS handshake of the
// front end's own can tell: gRPC's deadline hides that etcd was down, took
// only TLS clients, did not speak TLS, or refused the front end's
// certificate or its CA etcd's. The endpoints are probed at once, each for
// at most probeTimeout, and every one that failed is named. Other errors
// (etcd's own answers, such as a refused login) already say what was wrong
// and come back as they are.
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
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", ep)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(probeTimeout))
	if tc == nil {
		// Plain gRPC: it fails in time against an etcd that takes only TLS
		// clients; a handshake that completes says so.
		//nolint:gosec // a probe: nothing is sent over it, only whether etcd speaks TLS
		probe := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12})
		if probe.HandshakeContext(ctx) == nil {
			return fmt.Errorf("etcd at %s takes TLS clients only: the front end needs etcd's CA (WithEtcdTLS, ibis-registry -etcd-ca)", ep)
		}
		return nil
	}
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
