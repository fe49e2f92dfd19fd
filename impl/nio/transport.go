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
	"github.com/ibisgo/ibis/ipl"
)

const (
	// readBufferSize is the read buffer of a blocking-flavour incoming connection (as
	// in impl/tcp); event-loop connections have none of their own.
	readBufferSize = 8 << 10
	// handshakeTimeout bounds how long an incoming connection may take to introduce
	// itself.
	handshakeTimeout = 10 * time.Second
)

// transport is the core.Transport of impl/nio: a listener whose accepted connections
// go, after the handshake, to the flavour of the receive port they connect to.
type transport struct {
	host  string
	loops int
	log   *zap.Logger
	ch    chooser

	ln  net.Listener
	acc core.Acceptor

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{} // sockets served by goroutines (handshakes, blocking flavour)
	wg     sync.WaitGroup
	loop   *engine // the nonblocking flavour's event loops
	thread *engine // the thread flavour's single event loop, made when first needed
}

var _ core.PortChecker = (*transport)(nil)

func newTransport(cfg *ipl.Config, ch chooser, loops int) *transport {
	return &transport{host: cfg.ListenHost, loops: loops, log: cfg.Logger.Named("nio"), ch: ch,
		conns: map[net.Conn]struct{}{}}
}

// CheckSendPort refuses port types whose flavour capabilities contradict each other.
func (t *transport) CheckSendPort(pt ipl.PortType) error {
	_, err := t.ch.sendFlavour(pt)
	return err
}

// CheckReceivePort refuses port types a flavour cannot serve.
func (t *transport) CheckReceivePort(pt ipl.PortType) error {
	_, err := t.ch.receiveFlavour(pt)
	return err
}

func (t *transport) Start(acc core.Acceptor) (string, error) {
	if ip := net.ParseIP(t.host); ip != nil && ip.IsUnspecified() {
		return "", fmt.Errorf("nio: listen host %s is a wildcard; give an address of this machine that peers can reach (IBIS_HOST)", t.host)
	}
	loop, err := newEngine("nonblocking", t.loops, false, t.log.Named("gnet"))
	if err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(t.host, "0"))
	if err != nil {
		_ = loop.stop()
		return "", fmt.Errorf("nio: listening on %s: %w", t.host, err)
	}
	t.ln, t.acc, t.loop = ln, acc, loop
	t.wg.Add(1)
	go t.acceptLoop()
	return ln.Addr().String(), nil
}

// engineFor returns the engine of a queued flavour, starting the thread engine on first use.
func (t *transport) engineFor(f Flavour) (*engine, error) {
	if f == NonBlocking {
		return t.loop, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fmt.Errorf("nio: %w", ipl.ErrClosed)
	}
	if t.thread == nil {
		e, err := newEngine("thread", 1, true, t.log.Named("gnet-thread"))
		if err != nil {
			return nil, err
		}
		t.thread = e
	}
	return t.thread, nil
}

// track registers a socket so that Close can end it; it fails once closed.
func (t *transport) track(c net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.conns[c] = struct{}{}
	return true
}

func (t *transport) untrack(c net.Conn) {
	t.mu.Lock()
	delete(t.conns, c)
	t.mu.Unlock()
}

// spawn runs f on a goroutine that Close waits for; it refuses once Close has begun.
func (t *transport) spawn(f func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		f()
	}()
	return true
}

func (t *transport) acceptLoop() {
	defer t.wg.Done()
	backoff := time.Millisecond
	for {
		c, err := t.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			t.log.Warn("accept failed", zap.Error(err))
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = time.Millisecond
		if !t.track(c) || !t.spawn(func() { t.serve(c) }) {
			_ = c.Close()
			return
		}
	}
}

// blockingIn is the handle of a connection a goroutine reads: a direct Receive may set
// read deadlines on it.
type blockingIn struct{ c net.Conn }

func (i blockingIn) Close() error                      { return i.c.Close() }
func (i blockingIn) SetReadDeadline(d time.Time) error { return i.c.SetReadDeadline(d) }

// serve runs the handshake of an incoming connection and hands it to its flavour.
func (t *transport) serve(c net.Conn) {
	handedOver := false
	defer func() {
		t.untrack(c)
		if !handedOver {
			_ = c.Close()
		}
	}()
	setNoDelay(c)
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	// The handshake is read from the socket itself, not through a buffer: nothing
	// beyond it may be consumed before the event loop takes the socket over.
	req, err := core.ReadRequest(c)
	if err != nil {
		t.log.Warn("dropping incoming connection", zap.Stringer("remote", c.RemoteAddr()), zap.Error(err))
		return
	}
	pt, perr := ipl.ParsePortType(req.PortType)
	flavour := Blocking
	if perr == nil {
		flavour, perr = t.ch.receiveFlavour(pt)
	}
	var in core.InConn = blockingIn{c}
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
		acc.Serve(bufio.NewReaderSize(c, readBufferSize))
		return
	}
	ib.box = acc.Inbox(ib.resume)
	handedOver = true
	gc, err := ib.eng.enroll(c, ib)
	if err != nil {
		ib.box.End(fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err))
		return
	}
	if !ib.enrolled(gc) {
		_ = gc.Close()
	}
}

// blockingOut is the send side of a blocking-flavour connection: the caller's goroutine
// writes the socket.
type blockingOut struct{ c net.Conn }

func (o blockingOut) WritePacket(bufs net.Buffers) error {
	_, err := bufs.WriteTo(o.c)
	return err
}

func (o blockingOut) Close() error { return o.c.Close() }

func (t *transport) Dial(ctx context.Context, addr string, req *core.Request, lost func(error)) (core.OutConn, *core.Reply, error) {
	pt, err := ipl.ParsePortType(req.PortType)
	if err != nil {
		return nil, nil, fmt.Errorf("nio: %w", err)
	}
	flavour, err := t.ch.sendFlavour(pt)
	if err != nil {
		return nil, nil, err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, fmt.Errorf("%w: dialling %s: %w", ipl.ErrRefused, addr, err)
	}
	if !t.track(c) {
		_ = c.Close()
		return nil, nil, fmt.Errorf("nio: dialling %s: %w", addr, ipl.ErrClosed)
	}
	setNoDelay(c)
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	rep, err := handshake(c, req)
	if !stop() {
		err = errors.Join(err, ctx.Err())
	}
	if err == nil {
		err = c.SetDeadline(time.Time{})
	}
	if err != nil || rep.Code != core.ReplyAccepted {
		t.untrack(c)
		_ = c.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("%w: handshake with %s: %w", ipl.ErrRefused, addr, err)
		}
		return nil, rep, nil
	}
	if flavour == Blocking {
		if !t.spawn(func() { t.watch(c, lost) }) {
			t.untrack(c)
			_ = c.Close()
			return nil, nil, fmt.Errorf("nio: dialling %s: %w", addr, ipl.ErrClosed)
		}
		return blockingOut{c}, rep, nil
	}
	t.untrack(c)
	eng, err := t.engineFor(flavour)
	if err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	o := newQueuedOut(lost)
	gc, err := eng.enroll(c, o)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err)
	}
	o.gc = gc
	return o, rep, nil
}

func handshake(c net.Conn, req *core.Request) (*core.Reply, error) {
	if err := core.WriteRequest(c, req); err != nil {
		return nil, err
	}
	return core.ReadReply(c)
}

// watch notices when the receiver ends a blocking-flavour connection: the receiver
// never writes after the handshake, so any read result means the connection is over.
func (t *transport) watch(c net.Conn, lost func(error)) {
	defer t.untrack(c)
	var b [1]byte
	_, err := c.Read(b[:])
	if err == nil {
		err = errors.New("receiver sent unexpected data")
	}
	lost(fmt.Errorf("%w: %w", ipl.ErrConnectionLost, err))
}

func setNoDelay(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
}

// Close stops accepting, ends every connection and waits for the goroutines and event
// loops to end.
func (t *transport) Close() error {
	t.mu.Lock()
	t.closed = true
	conns := make([]net.Conn, 0, len(t.conns))
	for c := range t.conns {
		conns = append(conns, c)
	}
	thread := t.thread
	t.mu.Unlock()
	var errs []error
	if t.ln != nil {
		if err := t.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	for _, c := range conns {
		_ = c.Close()
	}
	t.wg.Wait()
	if t.loop != nil {
		errs = append(errs, t.loop.stop())
	}
	if thread != nil {
		errs = append(errs, thread.stop())
	}
	return errors.Join(errs...)
}
