package registry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// closeLeaveTimeout bounds the clean leave that Close attempts, and how
// long a second Close waits for a leave already under way.
const closeLeaveTimeout = 2 * time.Second

// joinReplyTimeout bounds the wait for the join reply once connected: the
// server answers a join at once, so a server silent for this long (before
// it announced its heartbeat interval) is taken for lost.
const joinReplyTimeout = 3 * DefaultHeartbeatInterval

// Client is one member's connection to the registry: it joined a pool, keeps
// the member alive with heartbeats, tracks the pool's membership from the
// event stream and carries out elections, signals, sequence numbers and
// name bindings. All methods are safe for concurrent use.
type Client struct {
	cfg  clientConfig
	log  *zap.Logger
	conn net.Conn

	// Set by Join before it returns, read-only afterwards.
	id        Identifier
	poolSize  int
	heartbeat time.Duration
	maxFrame  int

	out         chan []byte        // frames for the writer
	cancels     *fifo[[]byte]      // cancel frames for the writer; never blocks
	startBeats  chan time.Duration // tells the writer the heartbeat period
	readTimeout atomic.Int64       // reader's deadline in ns; 0 until joined

	mu         sync.Mutex
	nextID     uint64
	pending    map[uint64]chan *message
	members    []Identifier
	leaving    bool
	leaveDone  chan struct{} // closed when the first Leave's request is over
	closedPool bool
	terminated bool
	poolClosed chan struct{} // closed on the PoolClosed event
	termCh     chan struct{} // closed on the Terminated event

	queue        *fifo[Event]
	events       chan Event
	stop         chan struct{} // closed by Leave/Close: abandon queued events
	stopOnce     sync.Once
	dispatchDone chan struct{}
	inHandler    atomic.Bool

	done    chan struct{}
	endOnce sync.Once
	err     error // why the client ended; set in endOnce before done closes

	wg sync.WaitGroup // reader and writer
}

// Join connects to the registry server at addr and joins the named pool.
// While the server is not reachable yet, Join keeps dialling (with backoff)
// until ctx ends or the WithDialTimeout limit passes, so processes started
// together with their registry work. When Join returns, Members() already
// holds every member present, this one included; the Joined events of the
// earlier members and this member's own Joined event are the first events
// delivered. Other events from before the join (elections, signals) are
// not replayed; ElectionResult and Lookup find their outcome.
func Join(ctx context.Context, addr, pool string, opts ...Option) (*Client, error) {
	cfg := defaultClientConfig()
	for _, o := range opts {
		o(&cfg)
	}
	fail := func(err error) (*Client, error) {
		return nil, fmt.Errorf("join pool %q at %s: %w", pool, addr, err)
	}
	if err := checkName("pool name", pool); err != nil {
		return fail(err)
	}
	if err := checkLength("address", cfg.address); err != nil {
		return fail(err)
	}
	if err := checkLength("tag", cfg.tag); err != nil {
		return fail(err)
	}
	if cfg.poolSize < 0 || cfg.poolSize > maxPoolSize {
		return fail(fmt.Errorf("%w: pool size %d out of range [0, %d]", ErrInvalid, cfg.poolSize, maxPoolSize))
	}
	conn, err := dial(ctx, addr, cfg)
	if err != nil {
		return fail(err)
	}
	c := newClient(conn, cfg)
	c.start()
	rep, err := c.call(ctx, &message{
		Kind:     kindJoin,
		Version:  cfg.version,
		Pool:     pool,
		PoolSize: int64(cfg.poolSize),
		Address:  cfg.address,
		Tag:      cfg.tag,
	})
	if err == nil {
		err = c.acceptJoin(rep)
	}
	if err != nil {
		c.shutdown(ErrClosed)
		return fail(err)
	}
	c.log.Debug("joined", zap.Stringer("member", c.id), zap.Int("poolSize", c.poolSize),
		zap.Duration("heartbeat", c.heartbeat))
	return c, nil
}

func newClient(conn net.Conn, cfg clientConfig) *Client {
	return &Client{
		cfg:          cfg,
		log:          cfg.logger.Named("registry-client"),
		conn:         conn,
		out:          make(chan []byte, 16),
		cancels:      newFIFO[[]byte](),
		startBeats:   make(chan time.Duration, 1),
		pending:      make(map[uint64]chan *message),
		leaveDone:    make(chan struct{}),
		poolClosed:   make(chan struct{}),
		termCh:       make(chan struct{}),
		queue:        newFIFO[Event](),
		events:       make(chan Event),
		stop:         make(chan struct{}),
		dispatchDone: make(chan struct{}),
		done:         make(chan struct{}),
	}
}

// start runs the client's goroutines. Until acceptJoin announces the
// heartbeat interval, the connection has one fixed read deadline, the
// join reply timeout, which frames arriving before the reply (pings,
// events) do not extend: a server that stops answering before the join
// reply makes Join fail with ErrRegistryLost.
func (c *Client) start() {
	_ = c.conn.SetReadDeadline(time.Now().Add(c.cfg.joinTimeout))
	c.wg.Add(2)
	go c.readLoop()
	go c.writeLoop()
	go c.dispatch()
}

// acceptJoin checks the join reply and takes over what the server said.
func (c *Client) acceptJoin(rep *message) error {
	hb := time.Duration(rep.Heartbeat)
	if rep.Member == nil || hb < minHeartbeatInterval || hb > maxHeartbeatInterval ||
		rep.MaxFrame <= 0 || rep.PoolSize < 0 || rep.PoolSize > maxPoolSize {
		return fmt.Errorf("%w: invalid join reply (member %v, heartbeat %v, max frame %d, pool size %d)",
			ErrProtocol, rep.Member, hb, rep.MaxFrame, rep.PoolSize)
	}
	c.id = *rep.Member
	c.poolSize = int(rep.PoolSize)
	c.heartbeat = hb
	c.maxFrame = int(min(rep.MaxFrame, math.MaxInt32))
	// The server pings every half interval; three intervals of silence
	// mean it is gone even if the connection has not broken.
	lost := 3 * c.heartbeat
	c.readTimeout.Store(int64(lost))
	_ = c.conn.SetReadDeadline(time.Now().Add(lost))
	c.startBeats <- c.heartbeat / 2
	return nil
}

// dial connects to addr, retrying with backoff while the server is not
// there, until ctx (or the dial timeout) ends.
func dial(ctx context.Context, addr string, cfg clientConfig) (net.Conn, error) {
	if cfg.dialTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.dialTimeout)
		defer cancel()
	}
	var d net.Dialer
	backoff := 10 * time.Millisecond
	for attempt := 1; ; attempt++ {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetNoDelay(true)
			}
			return conn, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("dial: gave up after %d attempts: %w (last error: %v)", attempt, ctx.Err(), err)
		}
		var addrErr *net.AddrError
		if errors.As(err, &addrErr) {
			return nil, fmt.Errorf("dial: %w", err)
		}
		cfg.logger.Debug("registry not reachable yet; retrying", zap.String("addr", addr),
			zap.Int("attempt", attempt), zap.Error(err))
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("dial: gave up after %d attempts: %w (last error: %v)", attempt, ctx.Err(), err)
		}
		backoff = min(2*backoff, time.Second)
	}
}

// finish ends the client once: it records why, wakes everything waiting on
// Done and closes the connection (which ends the reader and the writer).
func (c *Client) finish(err error) {
	c.endOnce.Do(func() {
		c.err = err
		close(c.done)
		_ = c.conn.Close()
		if errors.Is(err, ErrRegistryLost) {
			c.log.Warn("registry lost", zap.Error(err))
		}
	})
}

// shutdown ends the client and waits for its goroutines. The event
// dispatcher is told to drop what it has not delivered; if shutdown is
// called while the event handler runs, it does not wait for the dispatcher
// (which may be its caller); the dispatcher exits when the handler returns.
func (c *Client) shutdown(err error) {
	c.finish(err)
	c.stopOnce.Do(func() { close(c.stop) })
	c.wg.Wait()
	if !c.inHandler.Load() {
		<-c.dispatchDone
	}
}

// Leave leaves the pool cleanly: the other members get a Left event, this
// member's elections and bound names are released, and the client ends
// (Err returns ErrClosed). Events not yet delivered are dropped. If ctx ends
// first, the connection is closed anyway and the others see Died instead.
// A Leave or Close while another Leave is under way waits (until ctx ends)
// for that one to finish, so the others still see Left; it then returns an
// error wrapping ErrClosed.
func (c *Client) Leave(ctx context.Context) error {
	c.mu.Lock()
	if c.leaving {
		c.mu.Unlock()
		select {
		case <-c.leaveDone:
		case <-ctx.Done():
		}
		c.shutdown(ErrClosed)
		return fmt.Errorf("leave: %w", ErrClosed)
	}
	c.leaving = true
	c.mu.Unlock()
	_, err := c.call(ctx, &message{Kind: kindLeave})
	close(c.leaveDone)
	c.shutdown(ErrClosed)
	if err != nil {
		return fmt.Errorf("leave pool %q: %w", c.id.Pool, err)
	}
	return nil
}

// Close leaves the pool (waiting at most a short time for the server to
// confirm, or for a Leave or Close already under way) and releases
// everything; it is idempotent, safe to call concurrently, and returns nil
// when the client had already ended.
func (c *Client) Close() error {
	select {
	case <-c.done:
		c.shutdown(ErrClosed)
		return nil
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeLeaveTimeout)
	defer cancel()
	err := c.Leave(ctx)
	c.shutdown(ErrClosed)
	if err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, ErrRegistryLost) {
		return err
	}
	return nil
}

// Done returns a channel that is closed when the client has ended: after
// Leave or Close, or when the registry was lost.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err says why the client ended: nil while it runs, ErrClosed after Leave
// or Close, or an error wrapping ErrRegistryLost (and the cause) when the
// connection to the server broke.
func (c *Client) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// Identity returns this member's Identifier.
func (c *Client) Identity() Identifier { return c.id }

// PoolSize returns the closed-world size of the pool, or 0 for an open
// world.
func (c *Client) PoolSize() int { return c.poolSize }

// HeartbeatInterval returns the failure-detection interval the server
// announced.
func (c *Client) HeartbeatInterval() time.Duration { return c.heartbeat }

// Events returns the channel on which events are delivered in order, when no
// handler was given with WithEventHandler (with a handler, nothing is sent
// on it). Events are queued without bound until received. The channel is
// closed when the client ends: after Leave or Close at once, after a lost
// registry once the events received before the loss have been delivered.
func (c *Client) Events() <-chan Event { return c.events }

// Members returns the current members of the pool in join order, this
// member included, as known from the events received so far.
func (c *Client) Members() []Identifier {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Identifier, len(c.members))
	copy(out, c.members)
	return out
}
