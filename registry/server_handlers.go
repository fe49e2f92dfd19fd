package registry

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
)

// handle acts on one decoded message from a client. It returns an error only
// for a protocol violation, which closes the connection; a request the
// server cannot grant gets an error reply instead. A request that changes
// the pools becomes an op for the store (submit); the others are answered
// here.
func (c *serverConn) handle(m *message) error {
	switch m.Kind {
	case kindHeartbeat:
		return nil
	case kindReply, kindEvent, kindPing:
		return fmt.Errorf("%w: client sent a %s message, which only servers send", ErrProtocol, m.Kind)
	}
	if m.ID == 0 {
		return fmt.Errorf("%w: %s request without a request id", ErrProtocol, m.Kind)
	}
	if m.Kind == kindJoin {
		c.handleJoin(m)
		return nil
	}
	o, err := c.decide(m)
	if o != nil {
		c.submit(o)
	}
	return err
}

// decide answers what needs no change of the pools, and turns a request
// that does into an op.
func (c *serverConn) decide(m *message) (*op, error) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	me := c.member
	if m.Kind == kindCancel {
		if me != nil && !me.gone {
			s.cancelWaiter(me, m.ID)
		}
		return nil, nil
	}
	if me == nil || me.gone {
		c.replyErr(m.ID, codeNotMember, "this connection is not a member of a pool (join first)")
		return nil, nil
	}
	switch {
	case m.Kind == kindRestore:
		c.handleRestore(me, m)
		return nil, nil
	case m.Kind == kindResume:
		c.handleResume(me, m)
		return nil, nil
	case m.Kind == kindLeave:
	case me.restoring:
		c.replyErr(m.ID, codeRecovering, "member %s is rejoining pool %s after a restart of the registry; "+
			"it may only restore its state, resume or leave", me.id, quoteName(me.pool.name))
		return nil, nil
	case me.pool.recovery != nil:
		c.replyErr(m.ID, codeRecovering, "pool %s is being rebuilt after a restart of the registry", quoteName(me.pool.name))
		return nil, nil
	}
	var kind opKind
	switch m.Kind {
	case kindLeave:
		kind = opLeave
	case kindElect:
		kind = opElect
	case kindElectionResult:
		c.handleElectionResult(me, m)
		return nil, nil
	case kindSignal:
		if m.Name == "" {
			c.replyErr(m.ID, codeInvalid, "empty signal text")
			return nil, nil
		}
		kind = opSignal
	case kindTerminate:
		kind = opTerminate
	case kindSequence:
		kind = opSequence
	case kindBind:
		kind = opBind
	case kindLookup:
		c.handleLookup(me, m)
		return nil, nil
	case kindUnbind:
		kind = opUnbind
	default:
		return nil, fmt.Errorf("%w: unexpected %s message", ErrProtocol, m.Kind)
	}
	if kind != opLeave && kind != opSignal && kind != opTerminate && !c.needName(m) {
		return nil, nil
	}
	id := me.id
	m.Member = &id
	lim := s.nameLimits()
	lim.memberNameBytes = s.memberBudget(me)
	return &op{kind: kind, front: me.owner.front, conn: me.owner.conn, limits: lim, req: m, local: c}, nil
}

// submit has the store order and apply o. A store that cannot take it
// gets the request an error reply saying so (the member may try again).
func (c *serverConn) submit(o *op) {
	s := c.s
	ctx := s.life
	if s.store.shared() {
		// A write to another process: bounded (the memory store applies
		// at once and needs no timer).
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.deathTimeout)
		defer cancel()
	}
	if err := s.store.submit(ctx, o); err != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		c.replyErr(o.req.ID, codeUnavailable, "the registry could not record the %s request in its store: %v", o.req.Kind, err)
	}
}

// reply queues a reply; m.ID must be the request's id. Called with s.mu held
// (or before the member exists).
func (c *serverConn) reply(m *message) {
	if c == nil {
		return // applied at a front end the member is not connected to
	}
	m.Kind = kindReply
	frame, err := encodeFrame(m)
	if err != nil {
		c.closeWith(err)
		return
	}
	c.send(frame)
}

// maxErrorLength bounds the text of an error reply, far below
// MaxStringLength (which the client enforces on every string): names and
// identifiers quoted in it can each be that long.
const maxErrorLength = 4 << 10

func (c *serverConn) replyErr(id uint64, code errCode, format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	if len(text) > maxErrorLength {
		text = strings.ToValidUTF8(text[:maxErrorLength], "") + "..."
	}
	c.reply(&message{ID: id, Code: code, Error: text})
}

// quoteName quotes a name for an error text, shortening a long one to its
// first bytes and its length.
func quoteName(s string) string {
	const keep = 64
	if len(s) <= keep {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(strings.ToValidUTF8(s[:keep], "")), len(s))
}

// needName checks that a request names something; it replies with an error
// and reports false if not.
func (c *serverConn) needName(m *message) bool {
	if m.Name == "" {
		c.replyErr(m.ID, codeInvalid, "empty name in %s request", m.Kind)
		return false
	}
	return true
}

func (c *serverConn) handleJoin(m *message) {
	s := c.s
	if m.Version < MinProtocolVersion || m.Version > ProtocolVersion {
		c.log.Info("join refused: protocol version mismatch", zap.Uint64("clientVersion", m.Version))
		s.mu.Lock()
		defer s.mu.Unlock()
		c.replyErr(m.ID, codeVersion, "client speaks protocol version %d, this server speaks %s",
			m.Version, versionRange())
		return
	}
	// The pool check vouched for its pool only; switching is allowed
	// between pools that are both open.
	if m.Pool != c.authPool && !(s.cfg.open(m.Pool) && s.cfg.open(c.authPool)) {
		c.log.Warn("join refused: the pool check was for another pool", zap.String("checked", c.authPool),
			zap.String("pool", m.Pool))
		s.mu.Lock()
		defer s.mu.Unlock()
		c.replyErr(m.ID, codeInvalid, "the connection's pool check was for pool %s, not %s: join every pool on a connection of its own",
			quoteName(c.authPool), quoteName(m.Pool))
		return
	}
	if m.Rejoin != nil {
		if s.store.shared() {
			c.handleTakeover(m)
		} else {
			c.handleRejoin(m)
		}
		return
	}
	if o := c.decideJoin(m); o != nil {
		c.submit(o)
	}
}

// decideJoin checks what this front end decides alone about a join (its
// limits, its own state) and turns the join into an op.
func (c *serverConn) decideJoin(m *message) *op {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.Pool == "" {
		c.replyErr(m.ID, codeInvalid, "empty pool name")
		return nil
	}
	if c.refuseJoin(m) {
		return nil
	}
	p := s.pools[m.Pool]
	if err := s.checkSource(c.source, p, nil); err != nil {
		c.log.Warn("join refused: a limit per source address", zap.String("pool", m.Pool), zap.Error(err))
		c.replyErr(m.ID, codeTooMany, "%v", err)
		return nil
	}
	switch {
	case p == nil && !s.store.shared() && s.cfg.recoveryWindow > 0 && time.Since(s.started) < s.cfg.recoveryWindow:
		c.replyErr(m.ID, codeRecovering, "the registry started %v ago and holds back new members of pools it does not know "+
			"for %v, until the members of such a pool from before a restart have come back; try again",
			time.Since(s.started).Round(time.Millisecond), s.cfg.recoveryWindow)
		return nil
	case p != nil && p.recovery != nil:
		c.replyErr(m.ID, codeRecovering, "pool %s is being rebuilt by its members after a restart of the registry; try again",
			quoteName(p.name))
		return nil
	}
	return &op{kind: opJoin, front: s.front, conn: c.serial, limits: s.nameLimits(), req: m, local: c}
}

// refuseJoin answers a join (or a move) that this front end cannot take
// whatever the pool: the connection has a member already, the pool size is
// out of range, the server is closing, or its store is not ready. It
// reports whether it did. Called with s.mu held.
func (c *serverConn) refuseJoin(m *message) bool {
	s := c.s
	switch {
	case c.member != nil:
		c.replyErr(m.ID, codeInvalid, "this connection already joined as %s", c.member.id)
	case m.PoolSize < 0 || m.PoolSize > maxPoolSize:
		c.replyErr(m.ID, codeInvalid, "pool size %d out of range [0, %d]", m.PoolSize, maxPoolSize)
	case s.closing:
		c.replyErr(m.ID, codeClosed, "the server is shutting down")
	default:
		if err := s.store.ready(); err != nil {
			c.replyErr(m.ID, codeUnavailable, "this registry front end cannot serve now: %v", err)
			return true
		}
		return false
	}
	return true
}

// replyJoin answers a join or rejoin: the member's identity and what the
// client must know of this server. Called with s.mu held.
func (c *serverConn) replyJoin(reqID uint64, p *pool, id Identifier) {
	if c == nil {
		return
	}
	s := c.s
	var flags uint64
	if s.cfg.restartable {
		flags |= flagRestartable
	}
	c.reply(&message{
		ID:        reqID,
		Member:    &id,
		PoolSize:  int64(p.size),
		Heartbeat: int64(s.cfg.heartbeat),
		MaxFrame:  int64(s.cfg.maxFrameSize),
		Death:     int64(s.cfg.deathTimeout),
		Epoch:     s.epoch,
		Flags:     flags,
	})
}

func (c *serverConn) handleElectionResult(me *member, m *message) {
	if !c.needName(m) {
		return
	}
	if winner, ok := me.pool.elections[m.Name]; ok {
		id := winner.id
		c.reply(&message{ID: m.ID, Member: &id})
		return
	}
	if err := c.s.addWaiter(me, m.ID, kindElectionResult, m.Name); err != nil {
		c.replyErr(m.ID, codeTooMany, "%v", err)
	}
}

func (c *serverConn) handleLookup(me *member, m *message) {
	if !c.needName(m) {
		return
	}
	if b, ok := me.pool.names[m.Name]; ok {
		id := b.owner.id
		c.reply(&message{ID: m.ID, Member: &id, Port: b.port})
		return
	}
	if err := c.s.addWaiter(me, m.ID, kindLookup, m.Name); err != nil {
		c.replyErr(m.ID, codeTooMany, "%v", err)
	}
}
