package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// open dials a hub and runs the pool check and the first frame's exchange on the
// connection, within ctx (bounded by cfg.timeout): it returns the connection and the
// hub's answer frame, or an error matching ErrUnreachable, ErrRefused, ErrTimeout or
// ErrProtocol that names the hub and the pool.
func open(ctx context.Context, cfg *clientConfig, hubAddr, pool string, secret poolauth.Secret, typ byte, payload []byte) (*net.TCPConn, frame, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	fail := func(sentinel error, err error) (*net.TCPConn, frame, error) {
		if ctx.Err() != nil && sentinel != ErrRefused {
			sentinel = ErrTimeout
		}
		return nil, frame{}, fmt.Errorf("%w: hub %s, pool %q: %w", sentinel, hubAddr, pool, err)
	}
	nc, err := cfg.dialer.DialContext(ctx, "tcp", hubAddr)
	if err != nil {
		return fail(ErrUnreachable, err)
	}
	c, ok := nc.(*net.TCPConn)
	if !ok {
		_ = nc.Close()
		return fail(ErrProtocol, fmt.Errorf("not a TCP connection: %T", nc))
	}
	// The context ends the exchange by expiring the connection's deadline.
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if d, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(d)
	}
	if err := poolauth.Dial(c, pool, secret); err != nil {
		_ = c.Close()
		if errors.Is(err, poolauth.ErrUnauthenticated) {
			return fail(ErrRefused, err)
		}
		return fail(ErrUnreachable, err)
	}
	if err := writeFrame(c, typ, payload); err != nil {
		_ = c.Close()
		return fail(ErrUnreachable, err)
	}
	f, err := readFrame(c)
	if err != nil {
		_ = c.Close()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
			return fail(ErrUnreachable, fmt.Errorf("reading the hub's answer: the server closed the connection without one "+
				"(as a hub that is shutting down does, or a server that is not an ibis-hub, such as an ibis-registry): %w", err))
		}
		return fail(ErrUnreachable, fmt.Errorf("reading the hub's answer: %w", err))
	}
	if !stop() {
		// The context ended just now and may have expired the deadline: too late.
		_ = c.Close()
		return fail(ErrTimeout, ctx.Err())
	}
	_ = c.SetDeadline(time.Time{})
	return c, f, nil
}

// result checks that f is a result frame saying OK.
func result(hubAddr, pool string, f frame) error {
	if f.typ != frameResult {
		return fmt.Errorf("%w: hub %s, pool %q: a frame of type %d instead of a result", ErrProtocol, hubAddr, pool, f.typ)
	}
	r, err := decodeResult(f.payload)
	if err != nil {
		return fmt.Errorf("hub %s, pool %q: %w", hubAddr, pool, err)
	}
	if r.code != codeOK {
		return resultError(hubAddr, pool, r)
	}
	return nil
}

// RelayRequest asks a hub for a relayed connection to a member.
type RelayRequest struct {
	Pool   string
	Secret poolauth.Secret
	// Key is the target's key, as it registered it.
	Key string
	// TargetHub is the hub the target registered at, when it is not the hub asked:
	// that hub then forwards the request to TargetHub (one hop).
	TargetHub string
}

// Relay asks the hub at hubAddr for a connection to the member req.Key and returns it
// once the hub has spliced it to the member's: the next byte read is the member's, and
// the caller runs the end-to-end handshake as the dialling side. The connection is a
// *net.TCPConn. Errors match ErrNoSuchMember, ErrRefused, ErrUnreachable, ErrTimeout
// or ErrProtocol and name the hub and the pool.
func Relay(ctx context.Context, hubAddr string, req RelayRequest, opts ...ClientOption) (net.Conn, error) {
	cfg := newClientConfig(opts)
	switch {
	case req.Key == "" || len(req.Key) > MaxKey:
		return nil, fmt.Errorf("%w: hub %s, pool %q: a key of %d bytes (1 to %d)", ErrRefused, hubAddr, req.Pool, len(req.Key), MaxKey)
	case len(req.TargetHub) > maxAddr:
		return nil, fmt.Errorf("%w: hub %s, pool %q: a target hub address of %d bytes (at most %d)", ErrRefused, hubAddr, req.Pool, len(req.TargetHub), maxAddr)
	}
	target := req.TargetHub
	if target == hubAddr {
		target = ""
	}
	c, f, err := open(ctx, &cfg, hubAddr, req.Pool, req.Secret, frameRelay, relayMsg{key: req.Key, targetHub: target}.encode())
	if err != nil {
		return nil, err
	}
	if err := result(hubAddr, req.Pool, f); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}
