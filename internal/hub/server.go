package hub

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// Server is a relay hub: members of closed sites keep a control connection to it, and
// it splices two connections that members open outward into one relayed stream. Make
// one with NewServer, serve with Serve, end with Close.
type Server struct {
	cfg    serverConfig
	log    *zap.Logger
	lookup poolauth.Lookup
	stats  counters
	done   chan struct{}   // closed by Close
	ctx    context.Context // ends with Close: it ends the hub's own dials
	cancel context.CancelFunc

	mu         sync.Mutex
	closed     bool
	lns        map[net.Listener]struct{}
	addr       net.Addr
	conns      map[net.Conn]*connState
	perIP      map[string]*ipCount
	handshakes int
	refusing   int
	members    map[memberID]*memberConn
	pending    map[token]*pendingRelay
	probing    chan struct{} // a slot per probe dial in flight
	wg         sync.WaitGroup
}

// connState is what the server tracks of a connection.
type connState struct {
	ip          string // "" for connections the hub opened (to another hub)
	handshaking bool
}

type ipCount struct{ conns, handshakes int }

// memberID names a registration: keys are unique within a pool.
type memberID struct{ pool, key string }

// NewServer returns a hub configured by opts.
func NewServer(opts ...ServerOption) *Server {
	cfg := newServerConfig(opts)
	lookup := cfg.lookup
	if lookup == nil {
		lookup = func(string) (poolauth.Secret, bool) { return poolauth.Secret{}, true }
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		ctx:     ctx,
		cancel:  cancel,
		cfg:     cfg,
		log:     cfg.log,
		lookup:  lookup,
		done:    make(chan struct{}),
		lns:     make(map[net.Listener]struct{}),
		conns:   make(map[net.Conn]*connState),
		perIP:   make(map[string]*ipCount),
		members: make(map[memberID]*memberConn),
		pending: make(map[token]*pendingRelay),
		probing: make(chan struct{}, maxProbing),
	}
}

// Open reports whether the hub serves any pool without a secret.
func (s *Server) Open() bool { return s.cfg.lookup == nil }

// Addr returns the address of the first listener served (nil before Serve).
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Serve accepts connections on ln until Close; it then returns ErrClosed (at once if
// the server was already closed), or else the listener's error. It closes ln.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ln.Close()
		return ErrClosed
	}
	s.lns[ln] = struct{}{}
	if s.addr == nil {
		s.addr = ln.Addr()
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.lns, ln)
		s.mu.Unlock()
		_ = ln.Close()
	}()
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrClosed
			}
			if passing(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", zap.Error(err), zap.Duration("after", backoff))
				select {
				case <-time.After(backoff):
					continue
				case <-s.done:
					return ErrClosed
				}
			}
			return fmt.Errorf("hub: accepting on %s: %w", ln.Addr(), err)
		}
		backoff = 0
		s.admit(c)
	}
}

// passing reports whether an accept error is a shortage that passes (file
// descriptors, buffers, a connection aborted before it was taken).
func passing(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func (s *Server) isClosed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// admit takes a new connection if the limits allow, else refuses it.
func (s *Server) admit(c net.Conn) {
	ip := remoteIP(c)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = c.Close()
		return
	}
	pc := s.perIP[ip]
	if pc == nil {
		pc = &ipCount{}
	}
	var reason string
	switch {
	case len(s.conns) >= s.cfg.maxConns:
		reason = fmt.Sprintf("the hub holds its limit of %d connections", s.cfg.maxConns)
	case pc.conns >= s.cfg.maxConnsPerIP:
		reason = fmt.Sprintf("the hub holds its limit of %d connections from %s", s.cfg.maxConnsPerIP, ip)
	case s.handshakes >= s.cfg.maxHandshakes:
		reason = fmt.Sprintf("the hub holds its limit of %d connections in their pool check", s.cfg.maxHandshakes)
	case pc.handshakes >= s.cfg.maxHandshakesPerIP:
		reason = fmt.Sprintf("the hub holds its limit of %d connections from %s in their pool check", s.cfg.maxHandshakesPerIP, ip)
	}
	if reason != "" {
		s.stats.refused.Add(1)
		if s.refusing >= maxRefusing {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.refusing++
		s.conns[c] = &connState{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.refuse(c, reason)
		return
	}
	s.perIP[ip] = pc
	pc.conns++
	pc.handshakes++
	s.handshakes++
	s.conns[c] = &connState{ip: ip, handshaking: true}
	s.wg.Add(1)
	s.mu.Unlock()
	go s.handle(c)
}

// refuse tells a client over a limit why, within a short deadline, and closes it.
func (s *Server) refuse(c net.Conn, reason string) {
	defer s.wg.Done()
	_ = c.SetDeadline(time.Now().Add(min(s.cfg.handshakeTimeout, 2*time.Second)))
	pool, _ := poolauth.Refuse(c, reason)
	s.log.Debug("refused a connection", zap.Stringer("from", c.RemoteAddr()), zap.String("pool", pool), zap.String("reason", reason))
	s.mu.Lock()
	s.refusing--
	delete(s.conns, c)
	s.mu.Unlock()
	_ = c.Close()
}

// passed moves c out of the handshake count once it passed the pool check.
func (s *Server) passed(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.conns[c]
	if st == nil || !st.handshaking {
		return
	}
	st.handshaking = false
	s.handshakes--
	if pc := s.perIP[st.ip]; pc != nil {
		pc.handshakes--
	}
}

// track adds a connection the hub opened itself (to another hub), so that Close ends
// it; it fails once the server is closed.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = &connState{}
	return true
}

// forget removes c from the tracked connections and closes it.
func (s *Server) forget(c net.Conn) {
	s.mu.Lock()
	if st := s.conns[c]; st != nil {
		delete(s.conns, c)
		if st.ip != "" {
			pc := s.perIP[st.ip]
			pc.conns--
			if st.handshaking {
				pc.handshakes--
				s.handshakes--
			}
			if pc.conns == 0 {
				delete(s.perIP, st.ip)
			}
		}
	}
	s.mu.Unlock()
	_ = c.Close()
}

// Close stops every listener, ends every connection (control, pending, relayed) and
// returns once every goroutine of the server has ended.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	close(s.done)
	s.cancel()
	for ln := range s.lns {
		_ = ln.Close()
	}
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

func remoteIP(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}
