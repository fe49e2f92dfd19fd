package registry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"go.uber.org/zap"
)

// supervise watches the session in use. When it ends while the client runs,
// the registry is lost: a single server that cannot be restarted (or a
// client that must not reconnect) ends the client; otherwise (a server
// that may be restarted, or several front ends) the client reports
// RegistryLost and rejoins, until it is back (the reader reports
// RegistryRestored), Close ends it, or rejoining fails for good. s is the
// session in use when it starts; the supervisor ends whatever session it
// holds when it returns.
func (c *Client) supervise(s *session) {
	defer c.wg.Done()
	defer func() {
		if s != nil {
			s.end(fmt.Errorf("client ended: %w", ErrClosed))
		}
	}()
	for {
		select {
		case <-s.done:
		case <-c.done:
			return
		}
		if c.isDone() {
			return
		}
		cause := s.err
		c.mu.Lock()
		restartable, leaving := c.mem.restartable, c.leaving
		c.mu.Unlock()
		if leaving {
			// A Leave is under way and ends the client. It may have moved the member
			// to another front end (client_leave.go), whose takeover closed this
			// session: a rejoin now would take the member from that leave.
			<-c.done
			return
		}
		switch {
		case errors.Is(cause, ErrDeclaredDead):
			c.giveUp(cause)
			return
		case !restartable && len(c.eps) == 1:
			c.giveUp(c.embeddedLost(cause))
			return
		case c.cfg.reconnectTimeout < 0:
			c.giveUp(fmt.Errorf("%w; reconnecting is turned off", cause))
			return
		}
		c.markLost(s, cause)
		s = nil
		next, err := c.reconnect(cause)
		if err != nil {
			if !c.isDone() {
				c.giveUp(err)
			}
			return
		}
		s = next
	}
}

// embeddedLost says why a client that lost an embedded server (which cannot
// be restarted, so the client does not rejoin it) gives up. One probe (the
// handshakes of a new connection, which a running server answers at once)
// tells whether that server still runs, in which case it has declared this
// member dead: the connection broke, and a broken connection is a death.
func (c *Client) embeddedLost(cause error) error {
	ctx, cancel := context.WithTimeout(c.life, embeddedProbeTimeout)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", c.eps[0].addr)
	if err == nil {
		var conn net.Conn
		if conn, err = c.secure(ctx, raw, c.eps[0], c.id.Pool); err == nil {
			_ = closeConn(conn)
		}
	}
	if err != nil {
		return fmt.Errorf("%w; the registry server will not come back: it ran embedded in another process of the pool, "+
			"which seems to have ended (%v)", cause, err)
	}
	return fmt.Errorf("%w: %w; the registry server still runs, embedded in another process of the pool, and declared "+
		"this member dead when its connection broke (an embedded server cannot be rejoined)", ErrDeclaredDead, cause)
}

// embeddedProbeTimeout bounds the probe of embeddedLost.
const embeddedProbeTimeout = 2 * time.Second

// markLost records that the registry is lost (calls fail with cause until
// it is back) and tells the program.
func (c *Client) markLost(s *session, cause error) {
	c.mu.Lock()
	if c.sess == s {
		c.sess = nil
	}
	c.lost = fmt.Errorf("%w (trying to rejoin)", cause)
	c.mu.Unlock()
	c.log.Warn("registry lost; trying to rejoin", zap.String("addr", c.Addr()), zap.Error(cause))
	c.queue.Push(Event{Type: RegistryLost, Member: c.id, Name: LostReconnecting + cause.Error()})
}

// giveUp ends the client because the registry is lost for good: the
// program gets a last RegistryLost event, after the events received
// before, and the event channel closes.
func (c *Client) giveUp(err error) {
	if !errors.Is(err, ErrRegistryLost) {
		err = fmt.Errorf("%w: %w", ErrRegistryLost, err)
	}
	if errors.Is(err, ErrDeclaredDead) {
		c.log.Error("this member was declared dead by the registry; it ends", zap.String("addr", c.Addr()), zap.Error(err))
	}
	c.mu.Lock()
	c.sess = nil
	c.lost = err
	c.mu.Unlock()
	c.log.Warn("registry lost for good", zap.String("addr", c.Addr()), zap.Error(err))
	prefix := LostForGood
	if errors.Is(err, ErrDeclaredDead) {
		prefix = LostDeclaredDead
	}
	c.queue.Push(Event{Type: RegistryLost, Member: c.id, Name: prefix + err.Error()})
	c.finish(err)
	c.queue.Close()
}

// reconnect tries to rejoin the pool, until it is back, the client ends,
// the reconnect limit passes or a server refuses the member for good. Each
// attempt goes to the next front end in the list (round robin, beginning
// after the one lost), so that a member whose front end died moves to a
// live one at once; the back-off follows each full round of failed
// attempts (with a single front end, each attempt).
func (c *Client) reconnect(cause error) (*session, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(c.life, c.cfg.reconnectTimeout)
	defer cancel()
	backoff := retryMinBackoff
	last := cause
	n := len(c.eps)
	next := (int(c.cur.Load()) + 1) % n
	for attempt := 1; ; attempt++ {
		if h := c.cfg.beforeRejoin; h != nil {
			h()
		}
		i := next
		next = (i + 1) % n
		s, err := c.rejoin(ctx, i)
		if err == nil {
			c.log.Info("rejoined the registry", zap.String("addr", c.eps[i].addr), zap.Int("attempts", attempt),
				zap.Duration("after", time.Since(start)))
			return s, nil
		}
		if c.isDone() {
			return nil, ErrClosed
		}
		if ctx.Err() == nil {
			if errors.Is(err, ErrNotMember) {
				// The server ran all along and declared this member dead when
				// its connection broke, or rebuilt the pool without it.
				return nil, fmt.Errorf("%w: %w: the registry at %s refused it back, having declared it dead "+
					"(its connection broke, or the pool was rebuilt without it): %w", ErrRegistryLost, ErrDeclaredDead, c.eps[i].addr, err)
			}
			if !transient(err) {
				return nil, fmt.Errorf("%w: the registry at %s refused this member back: %w", ErrRegistryLost, c.eps[i].addr, err)
			}
			last = err
			c.log.Debug("rejoin failed; trying again", zap.String("addr", c.eps[i].addr), zap.Int("attempt", attempt), zap.Error(err))
			if attempt%n != 0 {
				continue
			}
		}
		if ctx.Err() != nil || sleep(ctx, backoff) != nil {
			if c.isDone() {
				return nil, ErrClosed
			}
			return nil, fmt.Errorf("%w: gave up rejoining %s after %d attempts in %v (the reconnect limit); last error: %v",
				ErrRegistryLost, c.addrList(), attempt, time.Since(start).Round(time.Millisecond), last)
		}
		backoff = min(2*backoff, retryMaxBackoff)
	}
}

// transient tells whether a failed rejoin is worth trying again: the
// server was not there, the connection broke, the server is shutting
// down, it has too many connections that have not joined yet, or the
// front end cannot reach its store (ErrUnavailable). A
// refusal (not a member any more, another pool size, a protocol the server
// does not speak, an invalid reply) is final.
func transient(err error) bool {
	return errors.Is(err, ErrRegistryLost) || errors.Is(err, ErrClosed) || errors.Is(err, errBusy) ||
		errors.Is(err, ErrUnavailable)
}

// rejoin makes one attempt to rejoin at front end i: dial, join again with
// this member's identity, tell the server what this member knows, and
// resume. The session it returns is already the client's own (see
// restored).
func (c *Client) rejoin(ctx context.Context, i int) (*session, error) {
	return c.rejoinWithin(ctx, c.life, i)
}

// rejoinWithin is rejoin with the exchange on the new session bounded by calls
// (rejoin's by the client's life: see rejoinOn) instead.
func (c *Client) rejoinWithin(ctx, calls context.Context, i int) (*session, error) {
	ep := c.eps[i]
	limit := c.cfg.joinTimeout
	if len(c.eps) > 1 {
		limit = min(limit, frontDialTimeout)
	}
	dctx, cancel := context.WithTimeout(ctx, limit)
	var d net.Dialer
	conn, err := d.DialContext(dctx, "tcp", ep.addr)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("%w: dial %s: %w", ErrRegistryLost, ep.addr, err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	c.mu.Lock()
	pool := c.id.Pool
	c.mu.Unlock()
	conn, err = c.secure(ctx, conn, ep, pool)
	if err != nil {
		return nil, err
	}
	s := c.newSession(conn)
	s.front = i
	s.start()
	if err := c.rejoinOn(calls, s); err != nil {
		s.end(fmt.Errorf("rejoin failed: %w", err))
		return nil, err
	}
	return s, nil
}

// rejoinOn runs the rejoin exchange on a new session, bounded by ctx: for a
// rejoin, the client's life only: a server that answers may take up to its recovery
// grace period to rebuild the pool before it answers the resume, and a
// server that goes silent is caught by the session's read deadline.
func (c *Client) rejoinOn(ctx context.Context, s *session) error {
	c.mu.Lock()
	id := c.id
	req := &message{
		Kind:     kindJoin,
		Version:  c.cfg.version,
		Pool:     id.Pool,
		PoolSize: int64(c.poolSize),
		Address:  id.Address,
		Tag:      id.Tag,
		Rejoin:   &id,
		Epoch:    c.mem.epoch,
	}
	c.mu.Unlock()
	rep, err := c.callOn(ctx, s, req)
	if err == nil {
		err = c.acceptJoin(s, rep, false)
	}
	if err != nil {
		return fmt.Errorf("rejoin as %s: %w", id, err)
	}
	for _, m := range c.restoreMessages() {
		if _, err := c.callOn(ctx, s, m); err != nil {
			return fmt.Errorf("restore the state of %s: %w", id, err)
		}
	}
	if _, err := c.callOn(ctx, s, c.resumeMessage()); err != nil {
		c.mu.Lock()
		back := c.sess == s
		c.mu.Unlock()
		if !back {
			return fmt.Errorf("resume as %s: %w", id, err)
		}
	}
	return nil
}

// restored makes s the client's session once the server has answered its
// resume: calls go through again and the program hears RegistryRestored.
// It runs on s's reader, before anything read after the reply.
func (c *Client) restored(s *session) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.sess = s
	c.lost = nil
	c.mem.epoch, c.mem.restartable = s.epoch, s.restartable
	c.cur.Store(int32(s.front))
	leaving := c.leaving // a move to leave (client_leave.go) lost nothing
	c.mu.Unlock()
	if !leaving {
		c.queue.Push(Event{Type: RegistryRestored, Member: c.id})
	}
}

// Estimates of encoded sizes, for packing restore messages below the
// server's maximum frame size. They are upper bounds: a string costs at
// most five bytes of header, an integer nine, an array five.
const (
	restoreBase  = 64 // map header, kind, id, list keys and headers
	restoreSlack = 64 // safety margin below the frame size
)

func stringCost(s string) int { return len(s) + 5 }

func identifierCost(id Identifier) int {
	return 5 + stringCost(id.Pool) + stringCost(id.ID) + stringCost(id.Address) + stringCost(id.Tag)
}

// restoreMessages packs what this member holds at the pool (elections won,
// names bound, sequence numbers drawn) and the members it knows into
// restore messages, each within the server's maximum frame size and with
// at most maxRestoreItems per list. Claims go first, so that they reach
// the server before the member list. An item too large for any frame of
// this server is left out and logged.
func (c *Client) restoreMessages() []*message {
	c.mu.Lock()
	won := make([]string, 0, len(c.mem.won))
	for name := range c.mem.won {
		won = append(won, name)
	}
	bound := make([]boundName, 0, len(c.mem.bound))
	for name, port := range c.mem.bound {
		bound = append(bound, boundName{Name: name, Port: port})
	}
	seqs := make([]sequenceMark, 0, len(c.mem.seqs))
	for name, next := range c.mem.seqs {
		seqs = append(seqs, sequenceMark{Name: name, Next: next})
	}
	members := slices.Clone(c.members)
	c.mu.Unlock()
	slices.Sort(won)
	slices.SortFunc(bound, func(a, b boundName) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(seqs, func(a, b sequenceMark) int { return cmp.Compare(a.Name, b.Name) })

	limit := int(c.maxFrame.Load()) - restoreSlack
	var out []*message
	cur, size := &message{Kind: kindRestore}, restoreBase
	flush := func() {
		if len(cur.Won)+len(cur.Bound)+len(cur.Seqs)+len(cur.Members) > 0 {
			out = append(out, cur)
		}
		cur, size = &message{Kind: kindRestore}, restoreBase
	}
	// fits makes room for an item of n bytes in a list holding count
	// items, flushing the message if needed; false: the item never fits.
	fits := func(what string, n, count int) bool {
		if restoreBase+n > limit {
			c.log.Warn("cannot restore an item larger than the server's frame size", zap.String("what", what),
				zap.Int("bytes", n), zap.Int("maxFrame", limit+restoreSlack))
			return false
		}
		if size+n > limit || count >= maxRestoreItems {
			flush()
		}
		size += n
		return true
	}
	for _, name := range won {
		if fits("election "+quoteName(name), stringCost(name), len(cur.Won)) {
			cur.Won = append(cur.Won, name)
		}
	}
	for _, b := range bound {
		if fits("global name "+quoteName(b.Name), 5+stringCost(b.Name)+stringCost(b.Port), len(cur.Bound)) {
			cur.Bound = append(cur.Bound, b)
		}
	}
	for _, q := range seqs {
		if fits("sequence "+quoteName(q.Name), 5+stringCost(q.Name)+9, len(cur.Seqs)) {
			cur.Seqs = append(cur.Seqs, q)
		}
	}
	for _, m := range members {
		if fits("member "+m.String(), identifierCost(m), len(cur.Members)) {
			cur.Members = append(cur.Members, m)
		}
	}
	flush()
	return out
}

// resumeMessage ends a rejoin: where this member's view of the pool's
// event order stands, the highest member number it heard of, its own join
// position, and whether it saw the pool close or terminate.
func (c *Client) resumeMessage() *message {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := &message{
		Kind:    kindResume,
		LastSeq: c.mem.lastSeq,
		NextNum: uint64(max(c.mem.maxNumber, 0) + 1),
		JoinSeq: c.mem.joinSeq,
	}
	if c.closedPool {
		m.Flags |= flagSawClosed
	}
	if c.terminated {
		m.Flags |= flagSawTerminated
		t := c.terminator
		m.Member = &t
	}
	return m
}
