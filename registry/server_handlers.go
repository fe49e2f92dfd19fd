package registry

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
)

// handle acts on one decoded message from a client. It returns an error only
// for a protocol violation, which closes the connection; a request the
// server cannot grant gets an error reply instead.
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

	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	me := c.member
	if m.Kind == kindCancel {
		if me != nil && !me.gone {
			s.cancelWaiter(me, m.ID)
		}
		return nil
	}
	if me == nil || me.gone {
		c.replyErr(m.ID, codeNotMember, "this connection is not a member of a pool (join first)")
		return nil
	}
	switch {
	case m.Kind == kindRestore:
		c.handleRestore(me, m)
		return nil
	case m.Kind == kindResume:
		c.handleResume(me, m)
		return nil
	case m.Kind == kindLeave:
	case me.restoring:
		c.replyErr(m.ID, codeRecovering, "member %s is rejoining pool %s after a restart of the registry; "+
			"it may only restore its state, resume or leave", me.id, quoteName(me.pool.name))
		return nil
	case me.pool.recovery != nil:
		c.replyErr(m.ID, codeRecovering, "pool %s is being rebuilt after a restart of the registry", quoteName(me.pool.name))
		return nil
	}
	switch m.Kind {
	case kindLeave:
		s.removeMember(me, Left)
		c.reply(&message{ID: m.ID})
	case kindElect:
		c.handleElect(me, m)
	case kindElectionResult:
		c.handleElectionResult(me, m)
	case kindSignal:
		c.handleSignal(me, m)
	case kindTerminate:
		p := me.pool
		if !p.terminated {
			p.terminated = true
			p.terminatedBy = me.id
			s.emit(p, Terminated, me.id, "", p.members)
		}
		c.reply(&message{ID: m.ID})
	case kindSequence:
		if !c.needName(m) {
			return nil
		}
		p := me.pool
		v, ok := p.sequences[m.Name]
		if !ok {
			if err := s.checkPoolNames(p, "sequences", len(p.sequences), len(m.Name)); err != nil {
				c.replyErr(m.ID, codeTooMany, "%v", err)
				return nil
			}
			p.nameBytes += len(m.Name)
		}
		p.sequences[m.Name] = v + 1
		c.reply(&message{ID: m.ID, Value: v})
	case kindBind:
		c.handleBind(me, m)
	case kindLookup:
		c.handleLookup(me, m)
	case kindUnbind:
		c.handleUnbind(me, m)
	default:
		return fmt.Errorf("%w: unexpected %s message", ErrProtocol, m.Kind)
	}
	return nil
}

// reply queues a reply; m.ID must be the request's id. Called with s.mu held
// (or before the member exists).
func (c *serverConn) reply(m *message) {
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
		c.handleRejoin(m)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case c.member != nil:
		c.replyErr(m.ID, codeInvalid, "this connection already joined as %s", c.member.id)
		return
	case m.Pool == "":
		c.replyErr(m.ID, codeInvalid, "empty pool name")
		return
	case m.PoolSize < 0 || m.PoolSize > maxPoolSize:
		c.replyErr(m.ID, codeInvalid, "pool size %d out of range [0, %d]", m.PoolSize, maxPoolSize)
		return
	case s.closing:
		c.replyErr(m.ID, codeClosed, "the server is shutting down")
		return
	}
	size := int(m.PoolSize)
	p := s.pools[m.Pool]
	if err := s.checkSource(c.source, p, nil); err != nil {
		c.log.Warn("join refused: a limit per source address", zap.String("pool", m.Pool), zap.Error(err))
		c.replyErr(m.ID, codeTooMany, "%v", err)
		return
	}
	switch {
	case p == nil && s.cfg.recoveryWindow > 0 && time.Since(s.started) < s.cfg.recoveryWindow:
		c.replyErr(m.ID, codeRecovering, "the registry started %v ago and holds back new members of pools it does not know "+
			"for %v, until the members of such a pool from before a restart have come back; try again",
			time.Since(s.started).Round(time.Millisecond), s.cfg.recoveryWindow)
		return
	case p != nil && p.recovery != nil:
		c.replyErr(m.ID, codeRecovering, "pool %s is being rebuilt by its members after a restart of the registry; try again",
			quoteName(p.name))
		return
	case p == nil:
		p = newPool(m.Pool, size)
		s.pools[m.Pool] = p
	}
	switch {
	case p.size != size:
		c.replyErr(m.ID, codePoolSize, "pool %s has size %d (0 = open world), but this member asked for %d",
			quoteName(p.name), p.size, size)
		return
	case p.terminated:
		c.replyErr(m.ID, codePoolClosed, "pool %s has been terminated", quoteName(p.name))
		return
	case p.closed:
		c.replyErr(m.ID, codePoolClosed, "closed-world pool %s already has all its %d members", quoteName(p.name), p.size)
		return
	}
	me := s.addMember(p, c, m.Address, m.Tag)
	c.joined = true
	s.unjoinedGone(c.source)
	c.log = c.log.With(zap.Stringer("member", me.id))
	c.log.Info("member joined")
	id := me.id
	c.replyJoin(m.ID, p, id)
}

// replyJoin answers a join or rejoin: the member's identity and what the
// client must know of this server. Called with s.mu held.
func (c *serverConn) replyJoin(reqID uint64, p *pool, id Identifier) {
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

func (c *serverConn) handleElect(me *member, m *message) {
	if !c.needName(m) {
		return
	}
	s := c.s
	p := me.pool
	winner, ok := p.elections[m.Name]
	if !ok {
		n := len(m.Name)
		err := s.checkMemberBytes(me, n)
		if err == nil {
			err = s.checkPoolNames(p, "elections", len(p.elections), n)
		}
		if err != nil {
			c.replyErr(m.ID, codeTooMany, "%v", err)
			return
		}
		me.nameBytes += n
		p.nameBytes += n
		winner = me
		p.elections[m.Name] = me
		s.emit(p, Elected, me.id, m.Name, p.members)
		for _, w := range s.takeWaiters(p.electionWaiters, m.Name) {
			id := me.id
			w.m.conn.reply(&message{ID: w.reqID, Member: &id})
		}
	}
	id := winner.id
	c.reply(&message{ID: m.ID, Member: &id})
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

func (c *serverConn) handleSignal(me *member, m *message) {
	if m.Name == "" {
		c.replyErr(m.ID, codeInvalid, "empty signal text")
		return
	}
	p := me.pool
	to := p.members
	if len(m.Targets) > 0 {
		to = make([]*member, 0, len(m.Targets))
		seen := make(map[*member]bool, len(m.Targets))
		for _, id := range m.Targets {
			t, ok := p.byID[id]
			if !ok {
				c.replyErr(m.ID, codeNotMember, "target %s is not a member of pool %s", quoteName(id), quoteName(p.name))
				return
			}
			if !seen[t] {
				seen[t] = true
				to = append(to, t)
			}
		}
	}
	c.s.emit(p, Signal, me.id, m.Name, to)
	c.reply(&message{ID: m.ID})
}

func (c *serverConn) handleBind(me *member, m *message) {
	if !c.needName(m) {
		return
	}
	p := me.pool
	if b, ok := p.names[m.Name]; ok {
		c.replyErr(m.ID, codeAlreadyBound, "%s is already bound to port %s of %s", quoteName(m.Name), quoteName(b.port), b.owner.id)
		return
	}
	n := len(m.Name) + len(m.Port)
	err := c.s.checkMemberBytes(me, n)
	if err == nil {
		err = c.s.checkPoolNames(p, "bound names", len(p.names), n)
	}
	if err != nil {
		c.replyErr(m.ID, codeTooMany, "%v", err)
		return
	}
	me.nameBytes += n
	p.nameBytes += n
	p.names[m.Name] = binding{owner: me, port: m.Port}
	for _, w := range c.s.takeWaiters(p.lookupWaiters, m.Name) {
		id := me.id
		w.m.conn.reply(&message{ID: w.reqID, Member: &id, Port: m.Port})
	}
	c.reply(&message{ID: m.ID})
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

func (c *serverConn) handleUnbind(me *member, m *message) {
	if !c.needName(m) {
		return
	}
	p := me.pool
	b, ok := p.names[m.Name]
	switch {
	case !ok:
		c.replyErr(m.ID, codeNotBound, "%s is not bound", quoteName(m.Name))
	case b.owner != me:
		c.replyErr(m.ID, codeNotBound, "%s is bound by %s, not by %s", quoteName(m.Name), b.owner.id, me.id)
	default:
		p.unbind(m.Name, b)
		c.reply(&message{ID: m.ID})
	}
}
