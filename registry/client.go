package registry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/fifo"
)

// closeLeaveTimeout bounds the clean leave that Close attempts, and how
// long a second Close waits for a leave already under way.
const closeLeaveTimeout = 2 * time.Second

// joinReplyTimeout bounds the server's silence while a member waits for its
// join reply: the server answers a join at once (after the Joined events of
// the members before it) and pings meanwhile, so a server silent for this
// long (before it announced its heartbeat interval) is taken for lost.
// joinPatience times it bounds the whole wait: a front end busy with a storm
// of joins may take a few times longer, one that never answers is left.
const (
	joinReplyTimeout = 3 * DefaultHeartbeatInterval
	joinPatience     = 10
)

// Back-off between attempts to join a pool that is being rebuilt and to
// rejoin a lost server: from retryMinBackoff, doubling, to at most
// retryMaxBackoff (each wait jittered by up to a quarter, so that the
// members of a pool do not all come back in the same instant).
const (
	retryMinBackoff = 20 * time.Millisecond
	retryMaxBackoff = time.Second
)

// Client is one member's connection to the registry: it joined a pool, keeps
// the member alive with heartbeats, tracks the pool's membership from the
// event stream and carries out elections, signals, sequence numbers and
// name bindings. When it loses a server that may be restarted it keeps the
// member's place: it reports RegistryLost, tries to rejoin with the same
// identity, and reports RegistryRestored once it is back (see "Registry
// restarts" in the package doc). All methods are safe for concurrent use.
type Client struct {
	cfg clientConfig
	log *zap.Logger
	// eps are the front ends the client may use (one, or several serving
	// the same pools), read-only; cur is the index of the one in use (while
	// the registry is lost: of the one lost last).
	eps []endpoint
	cur atomic.Int32
	// joinToken names this client's join in all its attempts, so that a
	// front end that made the join but whose reply was lost gives the same
	// member to the next attempt (doc.go, "jt").
	joinToken uint64

	// Set by Join before it returns, read-only afterwards.
	id       Identifier
	poolSize int

	heartbeat atomic.Int64 // ns, as the server announced at the last (re)join
	maxFrame  atomic.Int64 // the server's maximum frame size, from the last (re)join

	// life ends when the client ends; it bounds reconnecting.
	life    context.Context
	endLife context.CancelFunc

	mu         sync.Mutex
	sess       *session // the connection in use; nil while the registry is lost
	lost       error    // why the registry is lost while sess is nil (wraps ErrRegistryLost)
	ended      bool     // finish ran; err says why
	nextID     uint64
	members    []Identifier
	leaving    bool
	leaveDone  chan struct{} // closed when the first Leave's request is over
	closedPool bool
	terminated bool
	terminator Identifier
	poolClosed chan struct{} // closed on the PoolClosed event
	termCh     chan struct{} // closed on the Terminated event
	mem        memory

	queue        *fifo.Queue[Event]
	events       chan Event
	stop         chan struct{} // closed by Leave/Close: abandon queued events
	stopOnce     sync.Once
	dispatchDone chan struct{}
	inHandler    atomic.Bool

	done    chan struct{}
	endOnce sync.Once
	err     error // why the client ended; set under mu before done closes

	wg sync.WaitGroup // the supervisor and every session's reader and writer
}

// memory is what this member knows of the pool that a restarted server
// needs to rebuild it: kept up to date from replies and events, sent when
// the member rejoins. Guarded by Client.mu. Its maps are bounded by the
// server's limits (a member cannot win, bind or draw more than the server
// lets it).
type memory struct {
	epoch       uint64              // the run of the server joined last
	restartable bool                // that server may be restarted: rejoin it when lost
	won         map[string]struct{} // elections this member won
	bound       map[string]string   // global names this member bound, to their ports
	seqs        map[string]int64    // per sequence, one above the largest number drawn here
	maxNumber   int                 // the highest member number heard of
	lastSeq     uint64              // the highest event seq received
	joinSeq     uint64              // the seq of this member's own Joined event
	lastJoined  Event               // the latest Joined event (the own one, at join time)
}

// Join connects to the registry server at addr and joins the named pool.
// addr is one host:port, or a comma-separated list of the front ends that
// serve the same pools ("a:8888,b:8888", see ParseAddrs; a malformed list
// fails at once with ErrInvalid). With a list, Join tries the front ends in
// turn, beginning with one picked to spread the members over them (see
// firstAddr), and moves on to the next when one cannot be dialled, breaks
// the connection, or answers that it cannot take the join now; Addr says
// which one it joined. While nothing listens at any address yet, Join keeps
// dialling (with backoff) until ctx ends or the WithDialTimeout limit
// (DefaultDialTimeout, 5s) passes, so processes started together with their
// registry work, and a wrong address fails within seconds; giving up, it
// returns an error wrapping ErrRegistryLost and the context's error, naming
// the address and the last dial error. A host name that does not resolve
// fails at once (in a list: when none resolves). While the pool is being
// rebuilt after a restart of the server (or the server has just started and
// waits for the pools of its previous run, see WithRecoveryWindow), or the
// front end cannot reach its store (ErrUnavailable), Join waits too, until
// ctx ends. When Join returns, Members() already holds every member
// present, this one included; the Joined events of the earlier members and
// this member's own Joined event are the first events delivered. Other
// events from before the join (elections, signals) are not replayed;
// ElectionResult and Lookup find their outcome.
func Join(ctx context.Context, addr, pool string, opts ...Option) (*Client, error) {
	cfg := defaultClientConfig()
	for _, o := range opts {
		o(&cfg)
	}
	fail := func(err error) (*Client, error) {
		return nil, fmt.Errorf("join pool %q at %s: %w", pool, addr, err)
	}
	addrs, err := ParseAddrs(addr)
	if err != nil {
		return fail(err)
	}
	if err := checkName("pool name", pool); err != nil {
		return fail(err)
	}
	if len(pool) > MaxPoolName {
		return fail(fmt.Errorf("%w: pool name of %d bytes exceeds the maximum of %d bytes", ErrInvalid, len(pool), MaxPoolName))
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
	c := newClient(cfg, addrs...)
	first := cfg.firstAddr
	if first < 0 || first >= len(addrs) {
		first = firstAddr(len(addrs))
	}
	c.cur.Store(int32(first))
	go c.dispatch()
	s, err := c.join(ctx, pool)
	if err != nil {
		c.shutdown(ErrClosed)
		return fail(err)
	}
	c.mu.Lock()
	c.sess = s
	c.mu.Unlock()
	c.wg.Add(1)
	go c.supervise(s)
	c.log.Debug("joined", zap.Stringer("member", c.id), zap.String("addr", c.Addr()), zap.Int("poolSize", c.poolSize),
		zap.Duration("heartbeat", c.HeartbeatInterval()))
	return c, nil
}

// newClient makes a client of the front ends at addrs (at least one), not
// yet joined.
func newClient(cfg clientConfig, addrs ...string) *Client {
	life, endLife := context.WithCancel(context.Background())
	eps := make([]endpoint, len(addrs))
	for i, a := range addrs {
		eps[i] = endpoint{addr: a, tls: clientTLS(cfg.tls, a)}
	}
	return &Client{
		cfg:          cfg,
		log:          cfg.logger.Named("registry-client"),
		eps:          eps,
		life:         life,
		endLife:      endLife,
		leaveDone:    make(chan struct{}),
		poolClosed:   make(chan struct{}),
		termCh:       make(chan struct{}),
		queue:        fifo.New[Event](),
		events:       make(chan Event),
		stop:         make(chan struct{}),
		joinToken:    rand.Uint64() | 1,
		dispatchDone: make(chan struct{}),
		done:         make(chan struct{}),
		mem: memory{
			won:       make(map[string]struct{}),
			bound:     make(map[string]string),
			seqs:      make(map[string]int64),
			maxNumber: -1,
		},
	}
}

// join makes the first join: it dials a front end (trying them in turn
// from the one in c.cur), sends the join and takes the reply. An answer
// that the pool is being rebuilt, or that the front end cannot reach its
// store, is tried again on a new connection to the next front end; so is,
// with several front ends, a connection that breaks or a front end that
// does not answer, as long as that attempt delivered no event. Back-off
// follows each full round of such attempts.
func (c *Client) join(ctx context.Context, pool string) (*session, error) {
	backoff := retryMinBackoff
	next := int(c.cur.Load())
	var answer error // the last answer that made join try again
	fail := func(err error) (*session, error) {
		if answer != nil && ctx.Err() != nil {
			return nil, fmt.Errorf("waiting to join: %w (last answer: %w)", ctx.Err(), answer)
		}
		return nil, err
	}
	for attempt, inRound := 1, 1; ; attempt, inRound = attempt+1, inRound+1 {
		raw, i, err := c.dial(ctx, next)
		if err != nil {
			return fail(err)
		}
		s, err := c.joinAt(ctx, raw, i, pool)
		if err == nil {
			c.cur.Store(int32(i))
			return s, nil
		}
		if !c.joinAgain(ctx, err) {
			return fail(err)
		}
		answer = err
		next = (i + 1) % len(c.eps)
		if inRound < len(c.eps) {
			c.log.Info("the registry front end cannot take the join; trying the next", zap.String("addr", c.eps[i].addr),
				zap.String("next", c.eps[next].addr), zap.Int("attempt", attempt), zap.Error(err))
			continue
		}
		inRound = 0
		c.log.Info("the registry cannot take the join now; waiting to join", zap.String("addr", c.eps[i].addr),
			zap.Int("attempt", attempt), zap.Error(err))
		if sleep(ctx, backoff) != nil {
			return fail(err)
		}
		backoff = min(2*backoff, retryMaxBackoff)
	}
}

// joinAt makes one attempt of the first join on raw, a new connection to
// front end i.
func (c *Client) joinAt(ctx context.Context, raw net.Conn, i int, pool string) (*session, error) {
	if f := c.cfg.addressFunc; f != nil {
		c.cfg.address = f(raw.LocalAddr())
		if err := checkLength("address", c.cfg.address); err != nil {
			_ = raw.Close()
			return nil, err
		}
	}
	conn, err := c.secure(ctx, raw, c.eps[i], pool)
	if err != nil {
		return nil, err
	}
	s := c.newSession(conn)
	s.front = i
	s.start()
	rep, err := c.callOn(ctx, s, &message{
		Kind:      kindJoin,
		Version:   c.cfg.version,
		Pool:      pool,
		PoolSize:  int64(c.cfg.poolSize),
		Address:   c.cfg.address,
		Tag:       c.cfg.tag,
		JoinToken: c.joinToken,
	})
	if err == nil {
		if err = c.acceptJoin(s, rep, true); err == nil {
			return s, nil
		}
	}
	s.end(fmt.Errorf("join attempt failed: %w", ErrClosed))
	return nil, err
}

// joinAgain tells whether a failed attempt of the first join is tried
// again: after an answer that the pool is being rebuilt or that the front
// end cannot reach its store; and, with several front ends, after a
// connection that broke, a front end shutting down or busy, as long as ctx
// runs and the attempt delivered no event (the membership it began to
// report would otherwise be mixed with another front end's).
func (c *Client) joinAgain(ctx context.Context, err error) bool {
	if isRecovering(err) || errors.Is(err, ErrUnavailable) {
		return true
	}
	if len(c.eps) == 1 || ctx.Err() != nil || !transient(err) {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.members) == 0 && c.mem.lastSeq == 0
}

// isRecovering tells whether err is the server's answer that the pool is
// being rebuilt, so a join should be tried again.
func isRecovering(err error) bool {
	var re *remoteError
	return errors.As(err, &re) && re.code == codeRecovering
}

// acceptJoin checks a join reply and takes over what the server said. On
// the first join it sets the member's identity; on a rejoin the server
// must give back the identity asked for.
func (c *Client) acceptJoin(s *session, rep *message, first bool) error {
	hb, death := time.Duration(rep.Heartbeat), time.Duration(rep.Death)
	if rep.Member == nil || hb < minHeartbeatInterval || hb > maxHeartbeatInterval ||
		death < 0 || death > maxHeartbeatInterval ||
		rep.MaxFrame <= 0 || rep.PoolSize < 0 || rep.PoolSize > maxPoolSize {
		return fmt.Errorf("%w: invalid join reply (member %v, heartbeat %v, death timeout %v, max frame %d, pool size %d)",
			ErrProtocol, rep.Member, hb, death, rep.MaxFrame, rep.PoolSize)
	}
	c.mu.Lock()
	if first {
		c.id = *rep.Member
		c.poolSize = int(rep.PoolSize)
		if c.mem.lastJoined.Member == c.id {
			c.mem.joinSeq = c.mem.lastJoined.Seq
		}
	} else if *rep.Member != c.id || int(rep.PoolSize) != c.poolSize {
		c.mu.Unlock()
		return fmt.Errorf("%w: rejoined as %v in a pool of size %d, but this member is %v in a pool of size %d",
			ErrProtocol, *rep.Member, rep.PoolSize, c.id, c.poolSize)
	}
	s.epoch = rep.Epoch
	s.restartable = rep.Flags&flagRestartable != 0
	if first {
		c.mem.epoch, c.mem.restartable = s.epoch, s.restartable
	}
	c.mem.maxNumber = max(c.mem.maxNumber, c.id.Number())
	c.mu.Unlock()
	c.heartbeat.Store(int64(hb))
	c.maxFrame.Store(min(rep.MaxFrame, math.MaxInt32))
	s.beginBeats(hb, serverLostAfter(hb, death, len(c.eps)))
	return nil
}

// serverLostAfter is how long a client keeps a silent server (hb and death
// as it announced them; fronts is how many front ends the client lists).
// The rule:
//   - One front end: twice the server's death timeout, so that a stall of
//     the server that its members survive (it does not blame them for its
//     own stalls, see Failure detection) is not turned by a member into a
//     broken connection, which would be a death: there is nowhere else to
//     go, so a paused registry is waited for.
//   - Several front ends: half the death timeout (at least two heartbeat
//     intervals, four of the server's pings), since another front end can
//     take the member over, and must do so before the silent front end's
//     lease (which lasts the death timeout) ends and its members are
//     declared dead.
//   - A server too old to announce a death timeout: three heartbeat
//     intervals.
func serverLostAfter(hb, death time.Duration, fronts int) time.Duration {
	switch {
	case death <= 0:
		return 3 * hb
	case fronts > 1:
		return max(death/2, 2*hb)
	}
	return 2 * death
}

// dialWarnAfter is how long dial retries quietly before it warns that the
// registry is not there.
const dialWarnAfter = 2 * time.Second

// frontDialTimeout bounds one connection attempt to one of several front
// ends, so that a front end whose host is down does not hold the others
// back. (With a single front end the attempt is bounded only by the dial
// timeout.)
const frontDialTimeout = 2 * time.Second

// dial connects to a front end, trying them in turn from index start, and
// rounds of them with backoff while none can be dialled (they may be
// starting), until ctx or the dial timeout ends. It returns the connection
// and the index of its front end. A host name that does not resolve fails
// at once; in a list it is skipped, and only a list of which no host
// resolves fails at once.
func (c *Client) dial(ctx context.Context, start int) (net.Conn, int, error) {
	if c.cfg.dialTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.dialTimeout)
		defer cancel()
	}
	var d net.Dialer
	n := len(c.eps)
	backoff := 10 * time.Millisecond
	begin, warned := time.Now(), false
	unresolved := make(map[int]bool)
	var last error
	gaveUp := func(attempt int) error {
		return fmt.Errorf("%w: no registry reachable at %s: gave up after %d attempts in %v: %w (last error: %v)",
			ErrRegistryLost, c.addrList(), attempt, time.Since(begin).Round(time.Millisecond), ctx.Err(), last)
	}
	attempt := 0
	for {
		for k := range n {
			i := (start + k) % n
			if unresolved[i] {
				continue
			}
			attempt++
			conn, err := c.dialOne(ctx, &d, c.eps[i].addr)
			if err == nil {
				return conn, i, nil
			}
			last = err
			if ctx.Err() != nil {
				return nil, 0, gaveUp(attempt)
			}
			var addrErr *net.AddrError
			if errors.As(err, &addrErr) {
				return nil, 0, fmt.Errorf("dial: %w", err)
			}
			var dnsErr *net.DNSError
			if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
				unresolved[i] = true
				if len(unresolved) == n {
					return nil, 0, fmt.Errorf("%w: the registry address %s does not resolve: %w", ErrRegistryLost, c.addrList(), err)
				}
			}
			c.log.Debug("registry not reachable yet; retrying", zap.String("addr", c.eps[i].addr),
				zap.Int("attempt", attempt), zap.Error(err))
		}
		if !warned && time.Since(begin) >= dialWarnAfter {
			// Say it once, so that a wrong address is not seconds of silence.
			warned = true
			deadline, _ := ctx.Deadline()
			c.log.Warn("registry not reachable; still trying", zap.String("addr", c.addrList()),
				zap.Time("until", deadline), zap.Error(last))
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, 0, gaveUp(attempt)
		}
		backoff = min(2*backoff, time.Second)
	}
}

// dialOne makes one connection attempt to addr (bounded by
// frontDialTimeout when the client has several front ends).
func (c *Client) dialOne(ctx context.Context, d *net.Dialer, addr string) (net.Conn, error) {
	if len(c.eps) > 1 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, frontDialTimeout)
		defer cancel()
	}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	return conn, nil
}

// sleep waits about d (jittered by up to a quarter) or until ctx ends,
// whose error it then returns.
func sleep(ctx context.Context, d time.Duration) error {
	d += time.Duration(rand.Int64N(int64(d)/4 + 1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// finish ends the client once: it records why, wakes everything waiting on
// Done, stops reconnecting and closes the connection in use (which ends its
// reader and writer).
func (c *Client) finish(err error) {
	c.endOnce.Do(func() {
		c.mu.Lock()
		c.err = err
		c.ended = true
		s := c.sess
		c.mu.Unlock()
		close(c.done)
		c.endLife()
		if s != nil {
			s.end(err)
		}
	})
}

// isDone reports whether the client has ended.
func (c *Client) isDone() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
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
// (Err returns ErrClosed). Events not yet delivered are dropped. With several
// front ends, a leave that the member's own does not confirm within a second
// (it may be stopped), or whose connection to it breaks, is made through
// another. If ctx ends first, the connection is closed anyway and the others
// see Died instead;
// so do they when Leave is called while the registry is lost (the member
// cannot say goodbye to a server that is not there, and a restarted server
// reports the members that do not come back as dead). A Leave or Close
// while another Leave is under way waits (until ctx ends) for that one to
// finish, so the others still see Left; it then returns an error wrapping
// ErrClosed.
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
	err := c.leave(ctx)
	close(c.leaveDone)
	c.shutdown(ErrClosed)
	if err != nil {
		return fmt.Errorf("leave pool %q: %w", c.id.Pool, err)
	}
	return nil
}

// Close leaves the pool (waiting at most a short time for the server to
// confirm, or for a Leave or Close already under way) and releases
// everything, reconnection attempts included; it is idempotent, safe to
// call concurrently, and returns nil when the client had already ended or
// the registry is lost, and when the server did not confirm in time (it
// may be stopped: the others then hear Died rather than Left, which is
// logged, but the member's work is done and Close is no failure).
func (c *Client) Close() error {
	select {
	case <-c.done:
		c.shutdown(ErrClosed)
		return nil
	default:
	}
	wait := closeLeaveTimeout
	if len(c.eps) > 1 {
		wait += leaveMoveAfter // time to leave through another front end
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err := c.Leave(ctx)
	c.shutdown(ErrClosed)
	switch {
	case errors.Is(err, errUnconfirmed), errors.Is(err, context.DeadlineExceeded):
		c.log.Warn("the registry did not confirm the leave in time; the others may hear that this member died",
			zap.String("addr", c.Addr()), zap.Duration("waited", wait), zap.Error(err))
	case err == nil, errors.Is(err, ErrClosed), errors.Is(err, ErrRegistryLost):
	default:
		return err
	}
	return nil
}

// Done returns a channel that is closed when the client has ended: after
// Leave or Close, or when the registry was lost for good (see RegistryLost).
// A registry lost for a while, which the client tries to rejoin, does not
// end it.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err says why the client ended: nil while it runs (also while it tries
// to rejoin a lost registry), ErrClosed after Leave or Close, or an error
// wrapping ErrRegistryLost (and the cause) when the registry was lost for
// good, which also matches ErrDeclaredDead when the registry declared this
// member dead.
func (c *Client) Err() error {
	select {
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.err
	default:
		return nil
	}
}

// Identity returns this member's Identifier. It stays the same when the
// member rejoins a restarted server.
func (c *Client) Identity() Identifier { return c.id }

// Addr returns the address of the registry front end in use: the one
// joined, or rejoined last; while the registry is lost, the one lost.
func (c *Client) Addr() string { return c.eps[c.cur.Load()].addr }

// addrList returns the registry address as the client was given it.
func (c *Client) addrList() string {
	addrs := make([]string, len(c.eps))
	for i, ep := range c.eps {
		addrs[i] = ep.addr
	}
	return strings.Join(addrs, ",")
}

// PoolSize returns the closed-world size of the pool, or 0 for an open
// world.
func (c *Client) PoolSize() int { return c.poolSize }

// HeartbeatInterval returns the failure-detection interval the server
// announced.
func (c *Client) HeartbeatInterval() time.Duration { return time.Duration(c.heartbeat.Load()) }

// Events returns the channel on which events are delivered in order, when no
// handler was given with WithEventHandler (with a handler, nothing is sent
// on it). Events are queued without bound until received. The channel is
// closed when the client ends: after Leave or Close at once, after a
// registry lost for good once the events received before, and the last
// RegistryLost event, have been delivered.
func (c *Client) Events() <-chan Event { return c.events }

// Members returns the current members of the pool in join order, this
// member included, as known from the events received so far. While the
// registry is lost it is the last membership known.
func (c *Client) Members() []Identifier {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Identifier, len(c.members))
	copy(out, c.members)
	return out
}
