package tcp

import (
	"bufio"
	"context"
	"errors"
	"net"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/impl/internal/sockets"
	"github.com/ibisgo/ibis/ipl"
)

// transport is the core.Transport of blocking TCP sockets: a goroutine per incoming
// connection reads it, the sender's goroutine writes.
type transport struct {
	host string
	spin time.Duration // how long a reader polls an empty socket before parking
	log  *zap.Logger
	g    *sockets.Group
	ln   net.Listener
	acc  core.Acceptor
}

func newTransport(cfg *ipl.Config) (*transport, error) {
	spin, err := spinFrom(cfg)
	if err != nil {
		return nil, err
	}
	return &transport{host: sockets.ListenHost(cfg), spin: spin, log: cfg.Logger.Named("tcp"), g: sockets.NewGroup(Name)}, nil
}

func (t *transport) Start(acc core.Acceptor) (string, error) {
	ln, err := sockets.Listen(Name, t.host)
	if err != nil {
		return "", err
	}
	t.ln, t.acc = ln, acc
	t.g.Spawn(func() { t.g.AcceptLoop(ln, t.log, t.serve) })
	return ln.Addr().String(), nil
}

// Inject serves a socket this member opened for a peer (core.Injector): a reverse
// set-up or a hub's relay, from the handshake on, as if it had been accepted.
func (t *transport) Inject(c net.Conn, route string) bool {
	t.log.Debug("serving a connection set up by another route", zap.String("route", route), zap.Stringer("remote", c.RemoteAddr()))
	return t.g.Serve(c, func(c net.Conn) { t.serveRoute(c, route) })
}

// Capabilities: the sockets are Go's net.Conns, so they take TLS and read deadlines.
func (t *transport) Capabilities() core.Capabilities {
	return core.Capabilities{TLS: true, DirectReads: true}
}

// serve runs the handshake of an incoming connection and then reads its messages.
func (t *transport) serve(c net.Conn) { t.serveRoute(c, "") }

// serveRoute serves a socket that came by route (core.Request.Route; "" when accepted).
func (t *transport) serveRoute(c net.Conn, route string) {
	sockets.SetNoDelay(c)
	_ = c.SetDeadline(time.Now().Add(sockets.HandshakeTimeout))
	opened, err := t.acc.Authenticate(c) // TLS and the pool check; refusals are logged there
	if err != nil {
		if !errors.Is(err, core.ErrTaken) {
			_ = c.Close()
		}
		return
	}
	c = opened
	defer c.Close()
	br := bufio.NewReaderSize(sockets.NewSpinReader(c, t.spin), sockets.ReadBufferSize)
	req, err := core.ReadRequest(br)
	if err != nil {
		t.acc.Refused(c.RemoteAddr(), err)
		return
	}
	req.Route = route
	rep, acc := t.acc.Accept(req, sockets.BlockingIn{C: c})
	if err := core.WriteReply(c, rep); err != nil {
		if acc != nil {
			acc.Abort(err)
		}
		return
	}
	if acc == nil {
		return
	}
	_ = c.SetDeadline(time.Time{})
	acc.ServeDirect(sockets.Stream{Reader: br, C: c})
}

func (t *transport) Dial(ctx context.Context, addr string, req *core.Request, lost func(error)) (core.OutConn, *core.Reply, error) {
	c, rep, err := t.g.Dial(ctx, addr, req, t.acc)
	if c == nil {
		return nil, rep, err
	}
	if err := t.g.Watch(c, lost); err != nil {
		return nil, nil, err
	}
	return sockets.NewBlockingOut(c), rep, nil
}

func (t *transport) Close() error { return t.g.Close(t.ln) }
