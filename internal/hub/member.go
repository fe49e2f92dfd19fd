package hub

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// Registration is what a member tells a hub.
type Registration struct {
	Pool   string
	Secret poolauth.Secret
	// Key is an unguessable name the member chose (1 to MaxKey bytes) and publishes:
	// whoever asks the hub to relay to Key reaches this member.
	Key string
	// Advertise lists the member's listen addresses (at most MaxAdvertise), which the
	// hub probes.
	Advertise []string
}

// Member is a member's registration at a hub: a control connection the hub asks for
// relayed connections on. It does not reconnect: when Done is closed, register again.
type Member struct {
	hubAddr   string
	pool      string
	key       string
	secret    poolauth.Secret
	cfg       clientConfig
	conn      *net.TCPConn
	reachable bool
	observed  string
	deadAfter time.Duration

	accepted  chan net.Conn
	accepting chan struct{}   // one slot per accept connection being opened (maxAccepting)
	ctx       context.Context // ends with the control connection
	cancel    context.CancelFunc
	done      chan struct{}
	wmu       sync.Mutex // serialises writes on conn
	wg        sync.WaitGroup

	mu  sync.Mutex
	err error
}

// maxAccepting bounds the accept connections a member opens at once, whatever the hub
// asks for.
const maxAccepting = 64

// Register registers at the hub at hubAddr and keeps the control connection until
// Close or until the hub is gone. The hub probes reg.Advertise before it answers, so
// that Reachable says whether others can dial this member directly.
func Register(ctx context.Context, hubAddr string, reg Registration, opts ...ClientOption) (*Member, error) {
	cfg := newClientConfig(opts)
	switch {
	case reg.Key == "" || len(reg.Key) > MaxKey:
		return nil, fmt.Errorf("%w: hub %s, pool %q: a key of %d bytes (1 to %d)", ErrRefused, hubAddr, reg.Pool, len(reg.Key), MaxKey)
	case len(reg.Advertise) > MaxAdvertise:
		return nil, fmt.Errorf("%w: hub %s, pool %q: %d advertised addresses (at most %d)", ErrRefused, hubAddr, reg.Pool, len(reg.Advertise), MaxAdvertise)
	}
	for _, a := range reg.Advertise {
		if len(a) > maxAddr {
			return nil, fmt.Errorf("%w: hub %s, pool %q: an advertised address of %d bytes (at most %d)", ErrRefused, hubAddr, reg.Pool, len(a), maxAddr)
		}
	}
	msg := registerMsg{interval: cfg.keepalive, key: reg.Key, advertise: reg.Advertise}
	c, f, err := open(ctx, &cfg, hubAddr, reg.Pool, reg.Secret, frameRegister, msg.encode())
	if err != nil {
		return nil, err
	}
	if f.typ != frameRegistered {
		_ = c.Close()
		if err := result(hubAddr, reg.Pool, f); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: hub %s, pool %q: a frame of type %d instead of the registration's answer", ErrProtocol, hubAddr, reg.Pool, f.typ)
	}
	ans, err := decodeRegistered(f.payload)
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("hub %s, pool %q: %w", hubAddr, reg.Pool, err)
	}
	m := &Member{
		hubAddr:   hubAddr,
		pool:      reg.Pool,
		key:       reg.Key,
		secret:    reg.Secret,
		cfg:       cfg,
		conn:      c,
		reachable: ans.reachable,
		observed:  ans.observed,
		deadAfter: keepaliveMisses * max(cfg.keepalive, ans.interval),
		accepted:  make(chan net.Conn, cfg.backlog),
		accepting: make(chan struct{}, maxAccepting),
		done:      make(chan struct{}),
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	go m.run()
	return m, nil
}

// Reachable reports whether the hub could dial back one of the advertised addresses.
func (m *Member) Reachable() bool { return m.reachable }

// Observed is this member's address as the hub saw it (a NAT's, behind one).
func (m *Member) Observed() string { return m.observed }

// Hub is the address of the hub.
func (m *Member) Hub() string { return m.hubAddr }

// Accepted delivers each relayed connection another member asked for, positioned at
// the dialler's first end-to-end byte: this member runs the handshake as the accepting
// side. It is closed once the member has ended. (Not used with WithOnRelay.)
func (m *Member) Accepted() <-chan net.Conn { return m.accepted }

// Done is closed once the control connection has ended and every goroutine of the
// member has finished.
func (m *Member) Done() <-chan struct{} { return m.done }

// Err says why the member ended (nil before): ErrClosed after Close, else an error
// matching ErrUnreachable.
func (m *Member) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

func (m *Member) setErr(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		m.err = err
	}
}

// Close ends the registration and returns once the member's goroutines have ended.
func (m *Member) Close() error {
	m.setErr(fmt.Errorf("%w: member %q at hub %s", ErrClosed, m.pool, m.hubAddr))
	_ = m.conn.Close()
	<-m.done
	for c := range m.accepted {
		_ = c.Close() // delivered but never taken
	}
	return nil
}

// run reads the control connection until it ends, then ends the member.
func (m *Member) run() {
	stop := make(chan struct{})
	var ping sync.WaitGroup
	ping.Add(1)
	go func() {
		defer ping.Done()
		t := time.NewTicker(m.cfg.keepalive)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if err := m.send(framePing, nil); err != nil {
					m.setErr(fmt.Errorf("%w: hub %s, pool %q: sending a ping: %w", ErrUnreachable, m.hubAddr, m.pool, err))
					_ = m.conn.Close()
					return
				}
			case <-stop:
				return
			}
		}
	}()
	for {
		_ = m.conn.SetReadDeadline(time.Now().Add(m.deadAfter))
		f, err := readFrame(m.conn)
		if err != nil {
			m.setErr(fmt.Errorf("%w: hub %s, pool %q: the control connection ended: %w", ErrUnreachable, m.hubAddr, m.pool, err))
			break
		}
		switch f.typ {
		case framePing:
			if len(f.payload) != 0 {
				m.setErr(fmt.Errorf("%w: hub %s, pool %q: a ping with a payload of %d bytes", ErrProtocol, m.hubAddr, m.pool, len(f.payload)))
				_ = m.conn.Close()
			}
		case frameIncoming:
			tok, err := decodeIncoming(f.payload)
			if err != nil {
				m.cfg.log.Warn("bad relay notice from the hub", zap.String("hub", m.hubAddr), zap.Error(err))
				continue
			}
			select {
			case m.accepting <- struct{}{}:
				m.wg.Add(1)
				go m.accept(tok)
			default:
				m.cfg.log.Warn("too many relayed connections being opened; this one is dropped", zap.String("hub", m.hubAddr), zap.Int("limit", maxAccepting))
			}
		default:
			m.cfg.log.Warn("unexpected frame from the hub", zap.String("hub", m.hubAddr), zap.Uint8("type", f.typ))
		}
	}
	_ = m.conn.Close()
	close(stop)
	ping.Wait()
	m.cancel()
	m.wg.Wait()
	close(m.accepted)
	close(m.done)
}

func (m *Member) send(typ byte, payload []byte) error {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	_ = m.conn.SetWriteDeadline(time.Now().Add(m.deadAfter))
	return writeFrame(m.conn, typ, payload)
}

// accept opens the connection the hub asked for and delivers it.
func (m *Member) accept(tok token) {
	done := sync.OnceFunc(m.wg.Done)
	defer done()
	c, f, err := open(m.ctx, &m.cfg, m.hubAddr, m.pool, m.secret, frameAccept, acceptMsg{key: m.key, token: tok}.encode())
	<-m.accepting // opened (or not): the slot is free for the next
	if err == nil {
		if err = result(m.hubAddr, m.pool, f); err != nil {
			_ = c.Close()
		}
	}
	if err != nil {
		m.cfg.log.Debug("relayed connection failed", zap.String("hub", m.hubAddr), zap.Error(err))
		return
	}
	if m.cfg.onRelay != nil {
		done() // f may serve the connection for as long as it lives
		m.cfg.onRelay(c)
		return
	}
	select {
	case m.accepted <- c:
	case <-m.ctx.Done():
		_ = c.Close()
	}
}
