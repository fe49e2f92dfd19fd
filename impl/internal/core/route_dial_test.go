package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/internal/testserve"
	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// routeTransport answers a dial by the route dialPeer put in its context: a direct one
// never connects (a firewall drops it: a connect timeout), a reverse set-up works. It
// records the routes in the order tried.
type routeTransport struct {
	mu    sync.Mutex
	tried []string
}

func (r *routeTransport) Start(Acceptor) (string, error) { return "", nil }
func (r *routeTransport) Capabilities() Capabilities     { return Capabilities{} }
func (r *routeTransport) Close() error                   { return nil }
func (r *routeTransport) Inject(net.Conn, string) bool   { return false }
func (r *routeTransport) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.tried
	r.tried = nil
	return t
}
func (r *routeTransport) Dial(ctx context.Context, addr string, _ *Request, _ func(error)) (OutConn, *Reply, error) {
	rt, _ := ctx.Value(routeCtxKey{}).(route)
	r.mu.Lock()
	r.tried = append(r.tried, rt.String())
	r.mu.Unlock()
	if rt.kind == routeReverse {
		return nil, &Reply{Code: ReplyAccepted}, nil
	}
	return nil, nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("i/o timeout")}
}

// A peer reached by a reverse set-up after its direct address timed out is reached the
// same way next time, first: the cached route is tried even though the peer published
// no hubs and did not say it is closed.
func TestCachedReverseRouteTriedFirst(t *testing.T) {
	tr := &routeTransport{}
	in := &Instance{tr: tr, reg: &registry.Client{}, log: zap.NewNop()}
	peer := ipl.IbisIdentifier{Pool: "p", ID: "1", Address: "10.0.0.9:4000"}
	for round, want := range [][]string{{"10.0.0.9:4000", "reverse set-up"}, {"reverse set-up"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, rep, rt, err := in.dialPeer(ctx, peer, &Request{}, func(error) {})
		cancel()
		if err != nil || rep.Code != ReplyAccepted || rt.kind != routeReverse {
			t.Fatalf("round %d: dialPeer = %v, %v, %v; want accepted by reverse set-up", round, rep, rt, err)
		}
		if got := tr.take(); len(got) != len(want) || got[0] != want[0] || got[len(got)-1] != want[len(want)-1] {
			t.Fatalf("round %d: routes tried %q, want %q", round, got, want)
		}
	}
}

// strangerTransport answers a dial of its stranger address as a transport does when
// something that is no Ibis-Go peer listens there, and accepts at any other.
type strangerTransport struct {
	routeTransport
	stranger string
}

func (s *strangerTransport) Dial(ctx context.Context, addr string, req *Request, lost func(error)) (OutConn, *Reply, error) {
	_, _, _ = s.routeTransport.Dial(ctx, addr, req, lost) // records the route
	if addr == s.stranger {
		return nil, nil, fmt.Errorf("%w: handshake with %s: %w", ipl.ErrRefused, addr,
			fmt.Errorf("%w: poolauth: reading the challenge: %w", poolauth.ErrStranger, io.EOF))
	}
	return nil, &Reply{Code: ReplyAccepted}, nil
}

// A peer whose first published address reaches another service (an address reused by
// another host) is reached at its second: the stranger's answer moves on, as a refused
// connection does, where it failed the Connect at once.
func TestStrangerAtFirstAddressMovesOn(t *testing.T) {
	tr := &strangerTransport{stranger: "10.88.0.1:4000"}
	in := &Instance{tr: tr, log: zap.NewNop()}
	peer := ipl.IbisIdentifier{Pool: "p", ID: "1", Address: "10.88.0.1:4000,10.77.1.1:4000"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, rep, rt, err := in.dialPeer(ctx, peer, &Request{}, func(error) {})
	if err != nil || rep.Code != ReplyAccepted || rt.addr != "10.77.1.1:4000" {
		t.Fatalf("dialPeer = %v, %v, %v; want accepted at the second address", rep, rt, err)
	}
	if got := tr.take(); len(got) != 2 {
		t.Errorf("routes tried %q, want both addresses", got)
	}
}

// In a pool with TLS, a stranger at the peer's address (it sends an SSH banner, or
// closes at once) fails the TLS handshake as poolauth.ErrStranger, so that dialPeer
// tries the next address; it was ErrUnauthenticated, returned at once.
func TestTLSStrangerIsAStranger(t *testing.T) {
	files, err := tlsconf.Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ccfg, err := files.Client()
	if err != nil {
		t.Fatal(err)
	}
	in := &Instance{tlsClient: ccfg, log: zap.NewNop()}
	for _, says := range []string{"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n", ""} {
		addr := testserve.Serve(t, func(c net.Conn) { _, _ = c.Write([]byte(says)) })
		cli, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = cli.SetDeadline(time.Now().Add(time.Minute)) // every read ends
		_, err = in.Introduce(cli)
		_ = cli.Close()
		if !errors.Is(err, poolauth.ErrStranger) || errors.Is(err, ipl.ErrUnauthenticated) {
			t.Errorf("a stranger saying %q: %v, want ErrStranger alone", says, err)
		}
	}
}
