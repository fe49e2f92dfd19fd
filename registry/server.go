package registry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Server is the central registry: it holds pools by name (members, the
// totally ordered event list, elections, sequence numbers and global names)
// and serves clients over TCP. A Server serves one listener; Close stops it
// and waits for everything it started.
type Server struct {
	cfg  serverConfig
	log  *zap.Logger
	quit chan struct{} // closed by Close
	// life ends with Close; submissions to the store end with it.
	life    context.Context
	endLife context.CancelFunc
	store   store
	// epoch names this run of the server (random, never 0). Clients keep it
	// and show it when they rejoin, so that a server can tell a member of
	// its own run that lost its connection (declared dead: refused) from a
	// member of a previous run coming back (rebuilds the pool).
	epoch uint64

	// mu guards everything below and all pool state. Lock order: mu before a
	// connection's out queue (its fifo.Queue's lock, a leaf): handlers and
	// events queue frames under mu (serverConn.send), which never blocks;
	// and mu before the etcd store's own lock (a leaf: ready is asked
	// under mu). Nothing else is locked under it, and it is never taken
	// under another lock (refusalLog's is taken without it).
	mu sync.Mutex
	// front names this front end in the ops it proposes (random; a shared
	// store gives it a new one each time it starts anew); with nextSerial
	// it names the connections that own members (ownerRef).
	front      uint64
	nextSerial uint64
	bySerial   map[uint64]*serverConn
	// goneFronts holds the front ends whose end (opFrontGone) has been
	// applied: ops they proposed later own no member.
	goneFronts map[uint64]bool
	ln         net.Listener
	started    time.Time // when serving began: the recovery window runs from here
	closing    bool
	conns      map[*serverConn]struct{}
	pools      map[string]*pool
	members    int
	waiting    int
	// unjoined counts the connections that have not joined (yet), and
	// unjoinedBy the same per source address; unjoinedFull remembers that
	// a limit was hit, to log it once; refusing counts the goroutines
	// telling clients beyond a limit why they are refused.
	unjoined     int
	unjoinedBy   map[string]int
	unjoinedFull bool
	refusing     int
	// sources counts, per source address, the members and the pools they
	// are in (WithMaxMembersPerSource, WithMaxPoolsPerSource).
	sources map[string]*sourceUse

	// clock measures members' silences without the server's own stalls
	// (watchClock feeds it).
	clock stallClock

	// tls is the effective TLS configuration (nil: plain TCP).
	tls *tls.Config
	// refusalLog bounds the log lines of refused handshakes.
	refusalLog logLimiter

	wg sync.WaitGroup // accept loop and connection goroutines

	events   atomic.Uint64
	joins    atomic.Uint64
	leaves   atomic.Uint64
	deaths   atomic.Uint64
	rejoins  atomic.Uint64
	accepted atomic.Uint64
	refused  atomic.Uint64
	bytesIn  atomic.Uint64
	bytesOut atomic.Uint64
}

// NewServer returns a server configured by opts; call Serve to run it.
func NewServer(opts ...ServerOption) *Server {
	cfg := defaultServerConfig()
	for _, o := range opts {
		o(&cfg)
	}
	cfg.effective()
	life, endLife := context.WithCancel(context.Background())
	s := &Server{
		cfg:        cfg,
		log:        cfg.logger.Named("registry-server"),
		quit:       make(chan struct{}),
		life:       life,
		endLife:    endLife,
		epoch:      rand.Uint64() | 1,
		front:      rand.Uint64() | 1,
		bySerial:   make(map[uint64]*serverConn),
		goneFronts: make(map[uint64]bool),
		conns:      make(map[*serverConn]struct{}),
		pools:      make(map[string]*pool),
		sources:    make(map[string]*sourceUse),
		unjoinedBy: make(map[string]int),
		clock:      newStallClock(),
		tls:        serverTLS(cfg.tls),
	}
	s.store = memoryStore{s}
	if len(cfg.etcd) > 0 {
		s.store = newEtcdStore(s, cfg.etcd)
	}
	return s
}

// StartEmbedded listens on addr (such as "127.0.0.1:0", letting the kernel
// pick the port) and serves in the background, for a launcher or the first
// process of a local pool that runs the registry in-process. Addr tells
// where it listens; Close stops it. An embedded server ends with its
// process, so it tells its clients not to wait for it to come back
// (WithRestartable(false)) unless opts say otherwise.
func StartEmbedded(addr string, opts ...ServerOption) (*Server, error) {
	opts = append([]ServerOption{WithRestartable(false)}, opts...)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("registry: listen on %s: %w", addr, err)
	}
	s := NewServer(opts...)
	if err := s.register(ln); err != nil {
		_ = ln.Close()
		return nil, err
	}
	go func() {
		defer s.wg.Done()
		if err := s.acceptLoop(ln); err != nil {
			s.log.Error("embedded registry stopped serving", zap.Error(err))
		}
	}()
	return s, nil
}

// Serve accepts connections on ln and serves them until Close, which makes
// it return nil. It returns an error if the listener fails, if the server
// is already serving, or if it has been closed (ErrClosed); ln is closed in
// every case. A nil ln gives ErrInvalid.
func (s *Server) Serve(ln net.Listener) error {
	if ln == nil {
		return fmt.Errorf("registry: serve: %w: nil listener", ErrInvalid)
	}
	if err := s.register(ln); err != nil {
		_ = ln.Close()
		return err
	}
	defer s.wg.Done()
	return s.acceptLoop(ln)
}

// register records ln as the server's listener and counts the accept loop
// in the wait group, under the lock that Close takes, so Close either sees
// the loop or prevents it.
func (s *Server) register(ln net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return fmt.Errorf("registry: serve: %w", ErrClosed)
	}
	if s.ln != nil {
		return fmt.Errorf("registry: serve: already serving on %s", s.ln.Addr())
	}
	s.ln = ln
	s.started = time.Now()
	s.wg.Add(2)
	go s.watchClock()
	s.store.start()
	return nil
}

func (s *Server) acceptLoop(ln net.Listener) error {
	s.log.Info("serving", zap.String("addr", ln.Addr().String()),
		zap.Duration("heartbeat", s.cfg.heartbeat), zap.Int("maxFrameSize", s.cfg.maxFrameSize),
		zap.String("trust", s.trustSummary()))
	backoff := 5 * time.Millisecond
	for {
		conn, err := ln.Accept()
		if err != nil {
			if s.isClosing() {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("registry: accept: %w", err)
			}
			// Running out of file descriptors and the like: wait a little
			// and try again rather than giving up on every client.
			s.log.Warn("accept failed; retrying", zap.Error(err), zap.Duration("backoff", backoff))
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-s.quit:
				t.Stop()
				return nil
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		s.startConn(conn)
	}
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// Close stops serving: it closes the listener and every client connection
// (clients see ErrRegistryLost), drops all pools and waits until every
// goroutine of the server has ended. It is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closing = true
	close(s.quit)
	s.endLife()
	for _, p := range s.pools {
		if p.recovery != nil {
			s.stopRecoveryTimer(p.recovery)
		}
	}
	ln := s.ln
	conns := make([]*serverConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()

	var err error
	if ln != nil {
		if cerr := ln.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
			err = fmt.Errorf("registry: close listener: %w", cerr)
		}
	}
	for _, c := range conns {
		c.closeWith(fmt.Errorf("server closing: %w", ErrClosed))
	}
	if cerr := s.store.close(); cerr != nil && err == nil {
		err = fmt.Errorf("registry: close store: %w", cerr)
	}
	s.wg.Wait()
	s.mu.Lock()
	s.pools = make(map[string]*pool)
	s.sources = make(map[string]*sourceUse)
	s.unjoinedBy = make(map[string]int)
	s.members = 0
	s.waiting = 0
	s.unjoined = 0
	s.mu.Unlock()
	s.log.Info("closed")
	return err
}

// Addr returns the address the server listens on once it is serving (for
// example "127.0.0.1:41234"), or "" before Serve or StartEmbedded.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// HeartbeatInterval returns the heartbeat interval the server announces to
// its clients.
func (s *Server) HeartbeatInterval() time.Duration { return s.cfg.heartbeat }

// DeathTimeout returns how long a member may be silent before the server
// declares it dead (WithDeathTimeout).
func (s *Server) DeathTimeout() time.Duration { return s.cfg.deathTimeout }

// trustSummary says in a few words how the server checks its clients, for
// its first log line.
func (s *Server) trustSummary() string {
	var what string
	switch {
	case s.cfg.poolSecrets != nil && s.cfg.secret.IsSet():
		what = fmt.Sprintf("secrets for %d pools, a server-wide secret for the others", len(s.cfg.poolSecrets))
	case s.cfg.poolSecrets != nil:
		what = fmt.Sprintf("secrets for %d pools, no other pool served", len(s.cfg.poolSecrets))
	case s.cfg.secret.IsSet():
		what = "a server-wide pool secret"
	default:
		what = "no pool secret: open to anyone who reaches the port"
	}
	if s.tls != nil {
		return what + "; TLS 1.3 with client certificates"
	}
	return what + "; plain TCP"
}
