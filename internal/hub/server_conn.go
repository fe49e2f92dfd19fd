package hub

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// handle runs one accepted connection: the pool check, then its first frame says
// what it is for.
func (s *Server) handle(c net.Conn) {
	defer s.wg.Done()
	defer s.forget(c)
	_ = c.SetDeadline(time.Now().Add(s.cfg.handshakeTimeout))
	pool, err := poolauth.Accept(c, s.lookup)
	if err != nil {
		s.stats.refused.Add(1)
		s.log.Debug("pool check failed", zap.Stringer("from", c.RemoteAddr()), zap.String("pool", pool), zap.Error(err))
		return
	}
	s.passed(c)
	f, err := readFrame(c)
	if err != nil {
		s.log.Debug("no first frame", zap.Stringer("from", c.RemoteAddr()), zap.String("pool", pool), zap.Error(err))
		return
	}
	switch f.typ {
	case frameRegister:
		s.serveMember(c, pool, f.payload)
	case frameRelay:
		s.serveRelay(c, pool, f.payload)
	case frameAccept:
		s.serveAccept(c, pool, f.payload)
	default:
		s.answer(c, codeProtocol, fmt.Sprintf("a first frame of type %d", f.typ))
	}
}

// answer writes a result frame (within the connection's deadline).
func (s *Server) answer(c net.Conn, code byte, msg string) {
	if err := writeFrame(c, frameResult, resultMsg{code: code, message: msg}.encode()); err != nil {
		s.log.Debug("cannot answer", zap.Stringer("to", c.RemoteAddr()), zap.Error(err))
	}
}

// pendingRelay is a relay waiting for its target's accept connection.
type pendingRelay struct {
	id     memberID
	target chan net.Conn // the accept connection, handed over once
	done   chan struct{} // closed when the splice has ended
}

func newToken() (token, error) {
	var t token
	if _, err := rand.Read(t[:]); err != nil {
		return t, fmt.Errorf("hub: random token: %w", err)
	}
	return t, nil
}

// serveRelay serves a relay request: it asks the target member for a connection, or
// forwards the request to the target's hub, and splices.
func (s *Server) serveRelay(c net.Conn, pool string, payload []byte) {
	req, err := decodeRelay(payload)
	if err != nil {
		s.answer(c, codeProtocol, err.Error())
		return
	}
	if req.targetHub != "" {
		s.forward(c, pool, req)
		return
	}
	id := memberID{pool, req.key}
	tok, err := newToken()
	if err != nil {
		s.answer(c, codeUnreachable, err.Error())
		return
	}
	p := &pendingRelay{id: id, target: make(chan net.Conn, 1), done: make(chan struct{})}
	defer close(p.done)
	s.mu.Lock()
	m := s.members[id]
	switch {
	case m == nil:
		s.mu.Unlock()
		s.answer(c, codeNoSuchMember, fmt.Sprintf("no member with that key in pool %q", pool))
		return
	case len(s.pending) >= s.cfg.maxPending:
		s.mu.Unlock()
		s.stats.refused.Add(1)
		s.answer(c, codeRefused, fmt.Sprintf("the hub holds its limit of %d relays being set up", s.cfg.maxPending))
		return
	}
	s.pending[tok] = p
	s.mu.Unlock()
	unpend := func() net.Conn {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.pending[tok] == p {
			delete(s.pending, tok)
			return nil
		}
		return <-p.target // handed over just now
	}

	_ = c.SetDeadline(time.Now().Add(s.cfg.relayTimeout + s.cfg.handshakeTimeout))
	if err := m.send(frameIncoming, tok[:]); err != nil {
		if t := unpend(); t != nil {
			s.splice(c, t, pool)
			return
		}
		s.answer(c, codeUnreachable, "the target's control connection failed: "+err.Error())
		return
	}
	timer := time.NewTimer(s.cfg.relayTimeout)
	defer timer.Stop()
	hungUp, stopWatch := watchHangUp(c)
	var t net.Conn
	select {
	case t = <-p.target:
	case <-timer.C:
	case <-m.gone:
	case <-hungUp:
	case <-s.done:
	}
	stopWatch()
	_ = c.SetDeadline(time.Now().Add(s.cfg.handshakeTimeout))
	if t == nil {
		t = unpend()
	}
	if t == nil {
		switch {
		case isDone(hungUp):
			s.log.Debug("the dialler left before its target came", zap.String("pool", pool), zap.Stringer("dialler", c.RemoteAddr()))
		case s.isClosed():
			s.answer(c, codeUnreachable, "the hub is closing")
		case isDone(m.gone):
			s.answer(c, codeUnreachable, "the target's control connection ended")
		default:
			s.stats.timeouts.Add(1)
			s.answer(c, codeTimeout, fmt.Sprintf("the target did not connect within %v", s.cfg.relayTimeout))
		}
		return
	}
	s.splice(c, t, pool)
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// serveAccept hands a member's accept connection to the relay waiting for it, and
// waits until the splice has ended (the relay's goroutine copies both ways).
func (s *Server) serveAccept(c net.Conn, pool string, payload []byte) {
	req, err := decodeAccept(payload)
	if err != nil {
		s.answer(c, codeProtocol, err.Error())
		return
	}
	s.mu.Lock()
	p := s.pending[req.token]
	if p == nil || p.id != (memberID{pool, req.key}) {
		s.mu.Unlock()
		s.answer(c, codeTimeout, "no relay is waiting for this connection (it timed out, or the dialler left)")
		return
	}
	delete(s.pending, req.token)
	p.target <- c
	s.mu.Unlock()
	<-p.done
}

// splice answers both sides OK and copies between them until either ends; then both
// are closed.
func (s *Server) splice(dialler, target net.Conn, pool string) {
	ok := resultMsg{code: codeOK}.encode()
	if err := writeFrame(target, frameResult, ok); err != nil {
		s.answer(dialler, codeUnreachable, "the target's connection failed: "+err.Error())
		_ = target.Close()
		return
	}
	if err := writeFrame(dialler, frameResult, ok); err != nil {
		_ = target.Close()
		return
	}
	s.stats.relays.Add(1)
	s.log.Debug("relaying", zap.String("pool", pool), zap.Stringer("dialler", dialler.RemoteAddr()), zap.Stringer("target", target.RemoteAddr()))
	s.pipe(dialler, target)
}

// pipe copies between a and b both ways until either ends, then closes both. Between
// two *net.TCPConn, io.Copy moves the bytes with splice(2), never through user space.
func (s *Server) pipe(a, b net.Conn) {
	_ = a.SetDeadline(time.Time{})
	_ = b.SetDeadline(time.Time{})
	s.stats.active.Add(1)
	defer s.stats.active.Add(-1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		n, _ := io.Copy(a, b)
		s.stats.bytes.Add(n)
		_ = a.Close()
		_ = b.Close()
	}()
	n, _ := io.Copy(b, a)
	s.stats.bytes.Add(n)
	_ = a.Close()
	_ = b.Close()
	wg.Wait()
}

// forward serves a relay to a member of another hub: it opens a relay there (one hop:
// the request it sends names no further hub) and splices.
func (s *Server) forward(c net.Conn, pool string, req relayMsg) {
	if !s.cfg.forward {
		s.answer(c, codeRefused, "this hub does not forward to other hubs")
		return
	}
	secret, _ := s.lookup(pool)
	d := net.Dialer{Timeout: s.cfg.handshakeTimeout}
	h, err := d.DialContext(s.ctx, "tcp", req.targetHub)
	if err != nil {
		s.answer(c, codeUnreachable, fmt.Sprintf("cannot reach hub %s: %v", req.targetHub, err))
		return
	}
	if !s.track(h) {
		_ = h.Close()
		s.answer(c, codeUnreachable, "the hub is closing")
		return
	}
	defer s.forget(h)
	_ = h.SetDeadline(time.Now().Add(s.cfg.handshakeTimeout + s.cfg.relayTimeout))
	_ = c.SetDeadline(time.Now().Add(2*s.cfg.handshakeTimeout + s.cfg.relayTimeout))
	if err := poolauth.Dial(h, pool, secret); err != nil {
		code := byte(codeUnreachable)
		if errors.Is(err, poolauth.ErrUnauthenticated) {
			code = codeUnauthenticated
		}
		s.answer(c, code, fmt.Sprintf("hub %s: %v", req.targetHub, err))
		return
	}
	if err := writeFrame(h, frameRelay, relayMsg{key: req.key}.encode()); err != nil {
		s.answer(c, codeUnreachable, fmt.Sprintf("hub %s: %v", req.targetHub, err))
		return
	}
	f, err := readFrame(h)
	var r resultMsg
	if err == nil && f.typ != frameResult {
		err = fmt.Errorf("%w: a frame of type %d instead of a result", ErrProtocol, f.typ)
	}
	if err == nil {
		r, err = decodeResult(f.payload)
	}
	if err != nil {
		s.answer(c, codeUnreachable, fmt.Sprintf("hub %s: %v", req.targetHub, err))
		return
	}
	if r.code != codeOK {
		s.answer(c, r.code, fmt.Sprintf("via hub %s: %s", req.targetHub, r.message))
		return
	}
	if err := writeFrame(c, frameResult, resultMsg{code: codeOK}.encode()); err != nil {
		return
	}
	s.stats.forwarded.Add(1)
	s.log.Debug("forwarding", zap.String("pool", pool), zap.Stringer("dialler", c.RemoteAddr()), zap.String("hub", req.targetHub))
	s.pipe(c, h)
}
