package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/addrlist"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// Reverse set-up: a member that cannot dial a peer (the peer is behind a firewall or
// NAT) asks it, through the registry, to dial back. The request is a targeted registry
// signal that core sends and takes itself (a program never sees one, and cannot send
// one); it carries a fresh token. The peer dials the addresses the asking member
// published (never others, whatever the signal says), writes reverseMagic and the token,
// and then serves the socket as if it had accepted it. The asking member's accept path
// recognises the magic and hands the socket to the waiting dial, which goes on with the
// handshake as the dialling side.

// reverseSignal begins the signal text; the token follows in hex.
const reverseSignal = "ibis.route.reverse:"

// reverseMagic begins a socket dialled back at a member's request; the token follows.
// The asking member answers reverseAck once it knows the token, so that a dial back that
// reached another listener (a stale or foreign address) tries the next address.
var reverseMagic = [4]byte{'I', 'B', 'R', 'V'}

const reverseAck = 'K'

const (
	tokenSize = 16
	// maxReverseDials bounds the dials a member makes back for its peers at once.
	maxReverseDials = 32
	// reverseDialTimeout bounds one dial back to one address of the asking member.
	reverseDialTimeout = 5 * time.Second
)

// ErrTaken is Authenticate's answer for a socket that a route set-up took over (a
// reverse connection handed to the dial waiting for it, a hub's probe answered): the
// transport neither serves nor closes it.
var ErrTaken = errors.New("core: socket taken by a route set-up")

// errRouteFailed marks a route (reverse, relay) that did not give a socket, so that
// dialPeer tries the next one.
var errRouteFailed = errors.New("route failed")

// reverseWaits are the reverse dials waiting for their sockets, by token, and the
// dials this member makes back for its peers.
type reverseWaits struct {
	mu      sync.Mutex
	m       map[[tokenSize]byte]chan net.Conn
	dialing int
}

// dialReverse asks r.peer to dial this member and waits for its socket until ctx ends.
func (in *Instance) dialReverse(ctx context.Context, r route) (net.Conn, error) {
	var tok [tokenSize]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return nil, fmt.Errorf("reverse set-up: a token: %w", err)
	}
	ch := make(chan net.Conn, 1)
	w := &in.reverse
	w.mu.Lock()
	if w.m == nil {
		w.m = map[[tokenSize]byte]chan net.Conn{}
	}
	w.m[tok] = ch
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.m, tok)
		w.mu.Unlock()
		select {
		case c := <-ch: // came as the wait ended
			_ = c.Close()
		default:
		}
	}()
	if err := in.reg.Signal(ctx, reverseSignal+hex.EncodeToString(tok[:]), r.peer); err != nil {
		return nil, fmt.Errorf("%w: reverse set-up: asking %s/%s through the registry: %w", errRouteFailed, r.peer.Pool, r.peer.ID, err)
	}
	select {
	case c := <-ch:
		return c, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: reverse set-up: %s/%s did not dial back: %w", errRouteFailed, r.peer.Pool, r.peer.ID, ctx.Err())
	}
}

// errReverseLate: a reverse connection came after the dial that asked for it gave up
// (its context ended: a short steal timeout, say). Its token is 16 random bytes, so one
// that matches no waiting dial is a late one, not a guess: the peer did what was asked,
// and it is no refusal to warn about.
var errReverseLate = errors.New("a reverse connection came after its dial gave up")

// takeReverse reads the token of a socket that began with reverseMagic, acknowledges it
// (reverseAck) and hands the socket to the dial waiting for it.
func (in *Instance) takeReverse(conn net.Conn) error {
	var tok [tokenSize]byte
	if _, err := io.ReadFull(conn, tok[:]); err != nil {
		return fmt.Errorf("%w: a reverse connection without its token: %w", ipl.ErrUnauthenticated, err)
	}
	w := &in.reverse
	w.mu.Lock()
	_, ok := w.m[tok]
	w.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: nobody waits for it (or never asked for it)", errReverseLate)
	}
	if _, err := conn.Write([]byte{reverseAck}); err != nil {
		return fmt.Errorf("acknowledging a reverse connection: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	ch, ok := w.m[tok]
	if !ok {
		return fmt.Errorf("%w: its dial gave up while it was acknowledged", errReverseLate)
	}
	delete(w.m, tok)
	ch <- conn // buffered, and only ever sent once
	return ErrTaken
}

// onReverseSignal answers a peer's reverse request: it dials the peer back, on a
// goroutine of the instance, unless maxReverseDials are under way.
func (in *Instance) onReverseSignal(e registry.Event) {
	tok, err := hex.DecodeString(strings.TrimPrefix(e.Name, reverseSignal))
	inj, canServe := in.tr.(Injector)
	switch {
	case err != nil || len(tok) != tokenSize:
		in.log.Warn("a malformed reverse set-up request", zap.Stringer("from", e.Member))
		return
	case !canServe:
		in.log.Warn("a reverse set-up request this implementation cannot serve", zap.Stringer("from", e.Member))
		return
	}
	w := &in.reverse
	w.mu.Lock()
	busy := w.dialing >= maxReverseDials
	if !busy {
		w.dialing++
	}
	w.mu.Unlock()
	if busy {
		in.log.Warn("too many reverse set-ups under way; this one is dropped", zap.Stringer("from", e.Member))
		return
	}
	in.Go(func() {
		defer func() {
			w.mu.Lock()
			w.dialing--
			w.mu.Unlock()
		}()
		in.dialBack(e.Member, tok, inj)
	})
}

// dialBack dials the addresses peer published, in order, until one takes the reverse
// magic and the token, and serves that socket as an incoming connection.
func (in *Instance) dialBack(peer ipl.IbisIdentifier, tok []byte, inj Injector) {
	info := parseRoutes(peer.Address)
	addrs, err := addrlist.Parse(info.addrs)
	if err != nil {
		addrs = []string{info.addrs}
	}
	hello := append(reverseMagic[:len(reverseMagic):len(reverseMagic)], tok...)
	var errs []error
	for _, a := range addrs {
		ctx, cancel := in.bind(context.Background())
		ctx, cancelT := context.WithTimeout(ctx, reverseDialTimeout)
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", a)
		cancelT()
		cancel()
		if err == nil {
			_ = c.SetDeadline(time.Now().Add(reverseDialTimeout))
			if err = writeAndAwaitAck(c, hello); err == nil {
				_ = c.SetDeadline(time.Time{})
				in.log.Debug("dialled back at a peer's request (reverse set-up)", zap.Stringer("peer", peer), zap.String("addr", a))
				if !inj.Inject(c, route{kind: routeReverse}.String()) {
					_ = c.Close()
				}
				return
			}
			_ = c.Close()
		}
		errs = append(errs, fmt.Errorf("%s: %w", a, err))
		if in.closed.Load() {
			return
		}
	}
	in.log.Info("could not dial back a peer that asked for it (reverse set-up)", zap.Stringer("peer", peer), zap.Error(errors.Join(errs...)))
}

// writeAndAwaitAck writes the reverse hello and reads the asking member's reverseAck,
// exactly one byte, so that nothing after it is consumed.
func writeAndAwaitAck(c net.Conn, hello []byte) error {
	if _, err := c.Write(hello); err != nil {
		return err
	}
	var ack [1]byte
	if _, err := io.ReadFull(c, ack[:]); err != nil {
		return fmt.Errorf("no acknowledgement of the reverse connection: %w", err)
	}
	if ack[0] != reverseAck {
		return fmt.Errorf("the address answered the reverse connection with %q: not the member that asked", ack[0])
	}
	return nil
}
