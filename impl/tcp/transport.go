package tcp

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
	// readBufferSize is the per-connection read buffer: small messages are read with
	// few system calls, large slices bypass it and go straight into the reader's memory.
	// It is kept small because what a read brings in beyond a message's header is copied
	// once more on its way to the reader's slice: with 8 KiB instead of 64 KiB, streams
	// of 100 KB arrays went from about 0.77x to 0.82x of a raw socket here.
	readBufferSize = 8 << 10
	// handshakeTimeout bounds how long an incoming connection may take to introduce
	// itself, so that a silent or slow peer cannot hold a goroutine forever.
	handshakeTimeout = 10 * time.Second
)

// transport is the core.Transport of blocking TCP sockets.
type transport struct {
	host string
	log  *zap.Logger

	ln  net.Listener
	acc core.Acceptor

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

func newTransport(cfg *ipl.Config) *transport {
	return &transport{host: cfg.ListenHost, log: cfg.Logger.Named("tcp"), conns: map[net.Conn]struct{}{}}
}

func (t *transport) Start(acc core.Acceptor) (string, error) {
	if ip := net.ParseIP(t.host); ip != nil && ip.IsUnspecified() {
		// The address is also what peers dial: a wildcard would send them nowhere.
		return "", fmt.Errorf("tcp: listen host %s is a wildcard; give an address of this machine that peers can reach (IBIS_HOST)", t.host)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(t.host, "0"))
	if err != nil {
		return "", fmt.Errorf("tcp: listening on %s: %w", t.host, err)
	}
	t.ln, t.acc = ln, acc
	t.wg.Add(1)
	go t.acceptLoop()
	return ln.Addr().String(), nil
}

// track registers a connection so that Close can end it; it fails once closed.
func (t *transport) track(c net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.conns[c] = struct{}{}
	return true
}

// spawn runs f on a goroutine that Close waits for; it refuses once Close has begun,
// and counts the goroutine under the same lock, so Close never waits on a counter that
// can still grow.
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

func (t *transport) untrack(c net.Conn) {
	t.mu.Lock()
	delete(t.conns, c)
	t.mu.Unlock()
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
			// Out of file descriptors and the like: wait a little and go on serving.
			t.log.Warn("accept failed", zap.Error(err))
			time.Sleep(backoff)
			if backoff < time.Second {
				backoff *= 2
			}
			continue
		}
		backoff = time.Millisecond
		if !t.track(c) || !t.spawn(func() { t.serve(c) }) {
			_ = c.Close()
			return
		}
	}
}

// inConn is the receive side's handle on a connection.
type inConn struct{ c net.Conn }

func (i inConn) Close() error { return i.c.Close() }

// SetReadDeadline lets a direct Receive on a one-to-one port honour its context.
func (i inConn) SetReadDeadline(t time.Time) error { return i.c.SetReadDeadline(t) }

// serve runs the handshake of an incoming connection and then reads its messages.
func (t *transport) serve(c net.Conn) {
	defer t.untrack(c)
	defer c.Close()
	setNoDelay(c)
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	br := bufio.NewReaderSize(c, readBufferSize)
	req, err := core.ReadRequest(br)
	if err != nil {
		t.log.Warn("dropping incoming connection", zap.Stringer("remote", c.RemoteAddr()), zap.Error(err))
		return
	}
	rep, acc := t.acc.Accept(req, inConn{c})
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
	acc.Serve(br)
}

// outConn is the send side of a connection.
type outConn struct{ c net.Conn }

func (o outConn) WritePacket(bufs net.Buffers) error {
	_, err := bufs.WriteTo(o.c)
	return err
}

func (o outConn) Close() error { return o.c.Close() }

func (t *transport) Dial(ctx context.Context, addr string, req *core.Request, lost func(error)) (core.OutConn, *core.Reply, error) {
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
		return nil, nil, fmt.Errorf("tcp: dialling %s: %w", addr, ipl.ErrClosed)
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
	if !t.spawn(func() { t.watch(c, lost) }) {
		t.untrack(c)
		_ = c.Close()
		return nil, nil, fmt.Errorf("tcp: dialling %s: %w", addr, ipl.ErrClosed)
	}
	return outConn{c}, rep, nil
}

func handshake(c net.Conn, req *core.Request) (*core.Reply, error) {
	if err := core.WriteRequest(c, req); err != nil {
		return nil, err
	}
	return core.ReadReply(c)
}

// watch notices when the receiver ends a connection (its port closed, its process
// died): the receiver never writes after the handshake, so any read result means the
// connection is over.
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

func (t *transport) Close() error {
	t.mu.Lock()
	t.closed = true
	conns := make([]net.Conn, 0, len(t.conns))
	for c := range t.conns {
		conns = append(conns, c)
	}
	t.mu.Unlock()
	var err error
	if t.ln != nil {
		if e := t.ln.Close(); e != nil && !errors.Is(e, net.ErrClosed) {
			err = e
		}
	}
	for _, c := range conns {
		_ = c.Close()
	}
	t.wg.Wait()
	return err
}
