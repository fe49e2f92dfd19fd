package nio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/impl/internal/sockets"
	"github.com/ibisgo/ibis/impl/nio/internal/inbox"
	"github.com/ibisgo/ibis/ipl"
)

// transport is the core.Transport of impl/nio: a listener whose accepted connections
// go, after the handshake, to the flavour of the receive port they connect to.
type transport struct {
	host  string
	loops int
	spin  time.Duration // how long a blocking-flavour reader polls (an event loop: pollFor of it)
	log   *zap.Logger
	ch    chooser
	g     *sockets.Group // sockets served by goroutines (handshakes, blocking flavour)
	hk    *hooks         // nil but in tests

	ln   net.Listener
	acc  core.Acceptor
	loop *engine // the nonblocking flavour's event loops

	// mu guards thread. It is a leaf: held while the thread engine starts, which
	// takes no lock of ours.
	mu     sync.Mutex
	thread *engine // the thread flavour's single event loop, made when first needed
}

var _ core.PortChecker = (*transport)(nil)

func newTransport(cfg *ipl.Config, ch chooser, loops int, spin time.Duration) *transport {
	return &transport{host: sockets.ListenHost(cfg), loops: loops, spin: spin, log: cfg.Logger.Named("nio"), ch: ch,
		g: sockets.NewGroup(Name), hk: testHooks}
}

// CheckSendPort refuses port types whose flavour capabilities contradict each other.
func (t *transport) CheckSendPort(pt ipl.PortType) error {
	_, err := t.ch.sendFlavour(pt)
	return err
}

// Capabilities: gnet reads the sockets of the queued flavours itself, so nio's data
// connections cannot speak TLS; blocking receive ports are read directly where their
// type allows, and the others' connections are pushed into inboxes (internal/inbox).
func (t *transport) Capabilities() core.Capabilities {
	return core.Capabilities{DirectReads: true, Source: t.source}
}

// source is the message source of a receive port of type pt: a queue of inboxes for
// the flavours an event loop reads, nil (a stream per connection) for blocking.
func (t *transport) source(pt ipl.PortType) core.Source {
	if f, err := t.ch.receiveFlavour(pt); err != nil || f == Blocking {
		return nil
	}
	return inbox.NewQueue(pt)
}

// CheckReceivePort refuses port types a flavour cannot serve.
func (t *transport) CheckReceivePort(pt ipl.PortType) error {
	_, err := t.ch.receiveFlavour(pt)
	return err
}

func (t *transport) Start(acc core.Acceptor) (string, error) {
	ln, err := sockets.Listen(Name, t.host)
	if err != nil {
		return "", err
	}
	loop, err := newEngine("nonblocking", t.loops, pollFor(t.spin), t.log.Named("gnet"), t.hk)
	if err != nil {
		_ = ln.Close()
		return "", err
	}
	t.ln, t.acc, t.loop = ln, acc, loop
	t.g.Spawn(func() { t.g.AcceptLoop(ln, t.log, t.serve) })
	return ln.Addr().String(), nil
}

// Inject serves a socket this member opened for a peer (core.Injector): a reverse
// set-up or a hub's relay, from the handshake on, as if it had been accepted.
func (t *transport) Inject(c net.Conn, route string) bool {
	t.log.Debug("serving a connection set up by another route", zap.String("route", route), zap.Stringer("remote", c.RemoteAddr()))
	return t.g.Serve(c, func(c net.Conn) { t.serveRoute(c, route) })
}

// engineFor returns the engine of a queued flavour, starting the thread engine on first use.
func (t *transport) engineFor(f Flavour) (*engine, error) {
	if f == NonBlocking {
		return t.loop, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.g.Closed() {
		return nil, fmt.Errorf("nio: %w", ipl.ErrClosed)
	}
	if t.thread == nil {
		e, err := newEngine("thread", 1, pollFor(t.spin), t.log.Named("gnet-thread"), t.hk)
		if err != nil {
			return nil, err
		}
		t.thread = e
	}
	return t.thread, nil
}

// serve runs the handshake of an incoming connection and hands it to its flavour.
func (t *transport) serve(c net.Conn) { t.serveRoute(c, "") }

// serveRoute serves a socket that came by route (core.Request.Route; "" when accepted).
func (t *transport) serveRoute(c net.Conn, route string) {
	handedOver := false
	defer func() {
		if !handedOver {
			_ = c.Close()
		}
	}()
	sockets.SetNoDelay(c)
	_ = c.SetDeadline(time.Now().Add(sockets.HandshakeTimeout))
	// The handshake is read from the socket itself, not through a buffer: nothing
	// beyond it may be consumed before the event loop takes the socket over.
	opened, err := t.acc.Authenticate(c) // TLS and the pool check; refusals are logged there
	if err != nil {
		handedOver = errors.Is(err, core.ErrTaken)
		return
	}
	c = opened
	req, err := core.ReadRequest(c)
	if err != nil {
		t.acc.Refused(c.RemoteAddr(), err)
		return
	}
	req.Route = route
	pt, perr := ipl.ParsePortType(req.PortType)
	flavour := Blocking
	if perr == nil {
		flavour, perr = t.ch.receiveFlavour(pt)
	}
	t.log.Debug("incoming connection", zap.Stringer("remote", c.RemoteAddr()), zap.String("port", req.To),
		zap.Stringer("receive flavour", flavour))
	var in core.InConn = sockets.BlockingIn{C: c}
	var ib *inbound
	if perr == nil && flavour != Blocking {
		eng, err := t.engineFor(flavour)
		if err != nil {
			perr = err
		} else {
			ib = newInbound(c, eng)
			in = ib
		}
	}
	rep, acc := t.acc.Accept(req, in)
	if perr != nil && acc != nil {
		acc.Abort(perr)
		return
	}
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
	if ib == nil {
		acc.ServeDirect(sockets.Stream{Reader: bufio.NewReaderSize(sockets.NewSpinReader(c, t.spin), sockets.ReadBufferSize), C: c})
		return
	}
	if ib.box = inbox.New(acc, ib.resume); ib.box == nil {
		return
	}
	handedOver = true
	ib.enroll(c)
}

func (t *transport) Dial(ctx context.Context, addr string, req *core.Request, lost func(error)) (core.OutConn, *core.Reply, error) {
	pt, err := ipl.ParsePortType(req.PortType)
	if err != nil {
		return nil, nil, fmt.Errorf("nio: %w", err)
	}
	flavour, err := t.ch.sendFlavour(pt)
	if err != nil {
		return nil, nil, err
	}
	t.log.Debug("connecting", zap.String("to", addr), zap.String("port", req.To), zap.Stringer("send flavour", flavour))
	c, rep, err := t.g.Dial(ctx, addr, req, t.acc)
	if c == nil {
		return nil, rep, err
	}
	if flavour == Blocking {
		if err := t.g.Watch(c, lost); err != nil {
			return nil, nil, err
		}
		return sockets.NewBlockingOut(c), rep, nil
	}
	t.g.Untrack(c)
	eng, err := t.engineFor(flavour)
	if err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	o := newQueuedOut(lost, eng)
	if _, err := eng.enroll(c, o); err != nil { // o got the connection in opened
		return nil, nil, fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err)
	}
	return o, rep, nil
}

// Close stops accepting, ends every connection and waits for the goroutines and event
// loops to end.
func (t *transport) Close() error {
	errs := []error{t.g.Close(t.ln)}
	t.mu.Lock()
	thread := t.thread
	t.mu.Unlock()
	if t.loop != nil {
		errs = append(errs, t.loop.stop())
	}
	if thread != nil {
		errs = append(errs, thread.stop())
	}
	return errors.Join(errs...)
}
