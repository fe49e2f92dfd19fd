// Package sockets holds the TCP plumbing that impl/tcp and impl/nio share: the accept
// loop, the set of sockets and goroutines a transport must end when it closes, the
// dialling side of the handshake, and the watch for a receiver that goes away.
package sockets

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/ipl"
)

const (
	// ReadBufferSize is the read buffer of a connection a goroutine reads: small
	// messages are read with few system calls, large slices bypass it and go straight
	// into the reader's memory. It is kept small because what a read brings in beyond a
	// message's header is copied once more on its way to the reader's slice
	// (docs/PERFORMANCE.md has the streaming figures).
	ReadBufferSize = 8 << 10
	// HandshakeTimeout bounds how long an incoming connection may take to introduce
	// itself, so that a silent or slow peer cannot hold a goroutine forever.
	HandshakeTimeout = 10 * time.Second
)

// Group is the set of sockets and goroutines of a transport: Close ends the sockets and
// waits for the goroutines, and nothing new joins once it has begun.
type Group struct {
	name   string // the implementation, for error messages
	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// NewGroup returns an empty group; name prefixes its errors.
func NewGroup(name string) *Group { return &Group{name: name, conns: map[net.Conn]struct{}{}} }

// Track registers a socket so that Close can end it; it fails once closed.
func (g *Group) Track(c net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.conns[c] = struct{}{}
	return true
}

// Untrack forgets a socket (it was closed or handed over).
func (g *Group) Untrack(c net.Conn) {
	g.mu.Lock()
	delete(g.conns, c)
	g.mu.Unlock()
}

// Spawn runs f on a goroutine that Close waits for; it refuses once Close has begun,
// and counts the goroutine under the same lock, so Close never waits on a counter that
// can still grow.
func (g *Group) Spawn(f func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
	return true
}

// Closed reports whether Close has begun.
func (g *Group) Closed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// Close closes ln (if not nil) and every tracked socket and waits for the goroutines.
func (g *Group) Close(ln net.Listener) error {
	g.mu.Lock()
	g.closed = true
	conns := make([]net.Conn, 0, len(g.conns))
	for c := range g.conns {
		conns = append(conns, c)
	}
	g.mu.Unlock()
	var err error
	if ln != nil {
		if e := ln.Close(); e != nil && !errors.Is(e, net.ErrClosed) {
			err = e
		}
	}
	for _, c := range conns {
		_ = c.Close()
	}
	g.wg.Wait()
	return err
}

// Listen opens the listener a transport publishes: on host alone when one is pinned,
// otherwise (host empty or a wildcard such as 0.0.0.0 or ::) on every interface, IPv4 and
// IPv6, and the listener's address is then a wildcard that core replaces with the list of
// this host's addresses (core/publish.go).
func Listen(name, host string) (net.Listener, error) {
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = ""
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		if host == "" {
			return nil, fmt.Errorf("%s: listening on all interfaces: %w", name, err)
		}
		return nil, fmt.Errorf("%s: listening on %s: %w", name, host, err)
	}
	return ln, nil
}

// AcceptLoop accepts until ln closes and serves each socket on a goroutine of g
// (tracked until serve returns). Run it with g.Spawn.
func (g *Group) AcceptLoop(ln net.Listener, log *zap.Logger, serve func(net.Conn)) {
	backoff := time.Millisecond
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait a little and go on serving.
			log.Warn("accept failed", zap.Error(err))
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = time.Millisecond
		if !g.Serve(c, serve) {
			return
		}
	}
}

// Serve serves the socket c on a goroutine of g, tracked until serve returns; once g is
// closing it closes c and reports false.
func (g *Group) Serve(c net.Conn, serve func(net.Conn)) bool {
	if !g.Track(c) {
		_ = c.Close()
		return false
	}
	if !g.Spawn(func() {
		defer g.Untrack(c)
		serve(c)
	}) {
		g.Untrack(c)
		_ = c.Close()
		return false
	}
	return true
}

// Dial connects to addr through acc.Connect (a plain dial, or the route core chose) and
// runs the sending side of the handshake within ctx. On an accepted reply it returns
// the socket, tracked in g; on a refusal it returns the reply and no socket.
func (g *Group) Dial(ctx context.Context, addr string, req *core.Request, acc core.Acceptor) (net.Conn, *core.Reply, error) {
	c, err := acc.Connect(ctx, addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, fmt.Errorf("%w: dialling %s: %w", ipl.ErrRefused, addr, err)
	}
	if !g.Track(c) {
		_ = c.Close()
		return nil, nil, fmt.Errorf("%s: dialling %s: %w", g.name, addr, ipl.ErrClosed)
	}
	SetNoDelay(c)
	raw := c
	stop := context.AfterFunc(ctx, func() { _ = raw.SetDeadline(time.Now()) })
	c, err = acc.Introduce(raw) // TLS and the pool check come before anything else
	var rep *core.Reply
	switch {
	case err != nil:
		c = raw
	case c != raw: // TLS: the group tracks the connection it will be used as
		g.Untrack(raw)
		if !g.Track(c) {
			err = fmt.Errorf("%s: %w", g.name, ipl.ErrClosed)
		}
	}
	if err == nil {
		rep, err = handshake(c, req)
	}
	if !stop() {
		err = errors.Join(err, ctx.Err())
	}
	if err == nil {
		err = c.SetDeadline(time.Time{})
	}
	if err != nil || rep.Code != core.ReplyAccepted {
		g.Untrack(c)
		_ = c.Close()
		if errors.Is(err, ipl.ErrUnauthenticated) {
			return nil, nil, fmt.Errorf("%s: pool check with %s: %w", g.name, addr, err)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%w: handshake with %s: %w", ipl.ErrRefused, addr, err)
		}
		return nil, rep, nil
	}
	return c, rep, nil
}

func handshake(c net.Conn, req *core.Request) (*core.Reply, error) {
	if err := core.WriteRequest(c, req); err != nil {
		return nil, err
	}
	return core.ReadReply(c)
}

// Watch notices, on a goroutine of g, when the receiver ends a connection whose socket
// the sender writes itself (its port closed, its process died, it cut the connection):
// the receiver writes nothing after the handshake but a cut notice, so any read result
// means the connection is over. It
// fails (and closes c) once g is closing.
func (g *Group) Watch(c net.Conn, lost func(error)) error {
	if !g.Spawn(func() {
		defer g.Untrack(c)
		var b [1]byte
		n, err := c.Read(b[:])
		if n == 1 { // a cut notice (core/cutnotice.go), or garbage
			_ = c.SetReadDeadline(time.Now().Add(time.Second)) // its rest was written with it
			err = core.ReadCutNotice(b[0], c)
		}
		lost(fmt.Errorf("%w: %w: %w", ipl.ErrConnectionLost, core.ErrReceiverEnded, err))
	}) {
		g.Untrack(c)
		_ = c.Close()
		return fmt.Errorf("%s: %w", g.name, ipl.ErrClosed)
	}
	return nil
}

// SetNoDelay turns Nagle's algorithm off: Ibis messages are whole when written.
func SetNoDelay(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
}

// BlockingOut is the send side of a connection the sender's goroutine writes itself
// (one write at a time, as core writes a connection).
type BlockingOut struct {
	C net.Conn
	// bufs holds the packets of the write under way: net.Buffers.WriteTo takes a
	// pointer, which to a parameter would cost an allocation per write.
	bufs net.Buffers
}

// NewBlockingOut returns the send side of c.
func NewBlockingOut(c net.Conn) *BlockingOut { return &BlockingOut{C: c} }

// WritePacket writes the packets with one vectored write where the system allows.
func (o *BlockingOut) WritePacket(bufs net.Buffers) error {
	o.bufs = bufs
	_, err := o.bufs.WriteTo(o.C)
	o.bufs = nil
	return err
}

// Close closes the socket.
func (o *BlockingOut) Close() error { return o.C.Close() }

// Pending reports how many bytes the receiver wrote that are still unread (a cut
// notice the watch has not taken yet); core's PendingCounter.
func (o *BlockingOut) Pending() (int, bool) { return KernelPending(o.C) }

// BlockingIn is the handle of an incoming connection a goroutine reads.
type BlockingIn struct{ C net.Conn }

// Close closes the socket, ending any read.
func (i BlockingIn) Close() error { return i.C.Close() }

// NotifyCut writes a cut notice before the connection is cut (core's CutNotifier).
// The receiver writes nothing else, so the socket's buffer takes it at once; a write
// that cannot is given up after a second.
func (i BlockingIn) NotifyCut(notice []byte) {
	_ = i.C.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = i.C.Write(notice)
}

// Pending reports how many bytes the kernel holds unread for the socket (core's
// PendingCounter); ok is false where that cannot be known (a TLS connection, whose
// kernel bytes are records not yet decrypted, counts as unknown).
func (i BlockingIn) Pending() (n int, ok bool) { return KernelPending(i.C) }

// KernelPending reports the bytes the kernel holds unread for a plain TCP socket.
func KernelPending(c net.Conn) (n int, ok bool) {
	tc, isTCP := c.(*net.TCPConn)
	if !isTCP {
		return 0, false
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var ierr error
	// Control does not wait for a read under way, as Read would.
	if err := rc.Control(func(fd uintptr) { n, ierr = FDPending(int(fd)) }); err != nil || ierr != nil {
		return 0, false
	}
	return n, true
}

// FDPending reports the bytes the kernel holds unread for the socket fd.
func FDPending(fd int) (int, error) { return unix.IoctlGetInt(fd, unix.SIOCINQ) }

// Stream is an incoming connection read through its buffer: the core.DirectStream
// that blocking transports hand to Acceptance.ServeDirect, so that a Receive on a
// one-to-one port reads the socket itself and a cancelled one leaves the stream whole.
type Stream struct {
	*bufio.Reader // Read and Peek
	C             net.Conn
}

var _ core.DirectStream = Stream{}

// SetReadDeadline cuts a Receive's wait short when its context ends.
func (s Stream) SetReadDeadline(d time.Time) error { return s.C.SetReadDeadline(d) }
