package registry

import (
	"fmt"

	"go.uber.org/zap"
)

// apply carries out an op that the store has put in its place in the
// order. Whatever it decides follows from the op and the pools' state, the
// same at every front end of a shared store; it answers the request only
// where the proposing connection is (c), and sends events only to members
// connected here. Called with s.mu held.
func (s *Server) apply(o *op) {
	c := o.local
	if c == nil && o.front == s.front {
		c = s.bySerial[o.conn]
	}
	switch o.kind {
	case opJoin:
		s.applyJoin(o, c)
		return
	case opTakeover:
		s.applyTakeover(o, c)
		return
	case opFrontGone:
		s.applyFrontGone(o)
		return
	}
	me := s.opMember(o, c)
	if me == nil {
		return
	}
	m := o.req
	switch o.kind {
	case opLeave:
		s.removeMember(me, Left)
		c.reply(&message{ID: m.ID})
	case opDied:
		ev, ok := s.removeMember(me, Died)
		if ok && c != nil && m.Flags&flagTell != 0 {
			if frame, err := encodeFrame(&message{Kind: kindEvent, Event: &ev}); err == nil {
				c.send(frame)
			}
		}
	case opElect:
		s.applyElect(o, c, me)
	case opSignal:
		s.applySignal(o, c, me)
	case opTerminate:
		p := me.pool
		if !p.terminated {
			p.terminated = true
			p.terminatedBy = me.id
			s.emit(p, Terminated, me.id, "", p.members)
		}
		c.reply(&message{ID: m.ID})
	case opSequence:
		p := me.pool
		v, ok := p.sequences[m.Name]
		if !ok {
			if err := checkPoolNames(p, o.limits, "sequences", len(p.sequences), len(m.Name)); err != nil {
				c.replyErr(m.ID, codeTooMany, "%v", err)
				return
			}
			p.nameBytes += len(m.Name)
		}
		p.sequences[m.Name] = v + 1
		c.reply(&message{ID: m.ID, Value: v})
	case opBind:
		s.applyBind(o, c, me)
	case opUnbind:
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
	default:
		s.log.Error("op of an unknown kind", zap.Uint8("kind", uint8(o.kind)))
	}
}

// flagTell (in a died op's request): the connection that proposed it is
// to be told that its member was declared dead.
const flagTell = 1 << 8

// opMember returns the member an op acts for: the one its request names,
// still in its pool and owned by the op's connection. Otherwise the
// request is answered that the connection holds no member (the member
// died, left, or moved to another connection since).
func (s *Server) opMember(o *op, c *serverConn) *member {
	id := o.req.Member
	if id == nil {
		s.log.Error("op without a member", zap.Uint8("kind", uint8(o.kind)))
		return nil
	}
	var me *member
	if p := s.pools[id.Pool]; p != nil {
		me = p.byID[id.ID]
	}
	if me == nil || me.gone || me.owner != (ownerRef{o.front, o.conn}) {
		c.replyErr(o.req.ID, codeNotMember, "%s is no longer a member on this connection", *id)
		return nil
	}
	return me
}

// connect makes c the connection of m, here. Called with s.mu held.
func (s *Server) connect(m *member, c *serverConn) {
	m.conn = c
	m.source = c.source
	c.member = m
	c.joined.Store(true)
	s.unjoinedGone(c.source)
	s.addSource(m)
}

// orphan handles an op that gave a member to a connection of this front
// end that has closed meanwhile: the member dies at once, as it would had
// the connection broken a moment later.
func (s *Server) orphan(o *op, id Identifier) {
	if o.front != s.front || o.local != nil {
		return
	}
	s.log.Info("member's connection closed before its join was recorded; declaring it dead", zap.Stringer("member", id))
	s.submitAsync(&op{kind: opDied, front: o.front, conn: o.conn, req: &message{Kind: kindLeave, Member: &id}})
}

func (s *Server) applyJoin(o *op, c *serverConn) {
	m := o.req
	size := int(m.PoolSize)
	if s.goneFronts[o.front] {
		// Proposed by a front end whose end has been applied already: no
		// member may be owned by it any more.
		c.replyErr(m.ID, codeUnavailable, "the registry front end ended before the join was recorded; join again")
		return
	}
	token := m.JoinToken
	if !s.store.shared() {
		token = 0
	}
	p := s.pools[m.Pool]
	if p == nil {
		p = newPool(m.Pool, size)
		s.pools[m.Pool] = p
	}
	if old := p.byToken[token]; token != 0 && old != nil && !old.gone && p.size == size && s.rejoinByToken(o, c, old) {
		return
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
	me := s.addMember(p, c, ownerRef{o.front, o.conn}, m.Address, m.Tag, token)
	if c == nil {
		s.orphan(o, me.id)
		return
	}
	c.log.Info("member joined", zap.Stringer("member", me.id))
	c.replyJoin(m.ID, p, me.id)
}

func (s *Server) applyElect(o *op, c *serverConn, me *member) {
	m := o.req
	p := me.pool
	winner, ok := p.elections[m.Name]
	if !ok {
		n := len(m.Name)
		err := checkMemberBytes(me, n, o.limits.memberNameBytes)
		if err == nil {
			err = checkPoolNames(p, o.limits, "elections", len(p.elections), n)
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

func (s *Server) applySignal(o *op, c *serverConn, me *member) {
	m := o.req
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
	s.emit(p, Signal, me.id, m.Name, to)
	c.reply(&message{ID: m.ID})
}

func (s *Server) applyBind(o *op, c *serverConn, me *member) {
	m := o.req
	p := me.pool
	if b, ok := p.names[m.Name]; ok {
		c.replyErr(m.ID, codeAlreadyBound, "%s is already bound to port %s of %s", quoteName(m.Name), quoteName(b.port), b.owner.id)
		return
	}
	n := len(m.Name) + len(m.Port)
	err := checkMemberBytes(me, n, o.limits.memberNameBytes)
	if err == nil {
		err = checkPoolNames(p, o.limits, "bound names", len(p.names), n)
	}
	if err != nil {
		c.replyErr(m.ID, codeTooMany, "%v", err)
		return
	}
	me.nameBytes += n
	p.nameBytes += n
	p.names[m.Name] = binding{owner: me, port: m.Port}
	for _, w := range s.takeWaiters(p.lookupWaiters, m.Name) {
		id := me.id
		w.m.conn.reply(&message{ID: w.reqID, Member: &id, Port: m.Port})
	}
	c.reply(&message{ID: m.ID})
}

// applyFrontGone declares dead the members that front end o.gone still
// owns: its lease ended before they moved to another front end.
func (s *Server) applyFrontGone(o *op) {
	s.goneFronts[o.gone] = true
	var dead []*member
	for _, p := range s.pools {
		for _, m := range p.members {
			if m.owner.front == o.gone {
				dead = append(dead, m)
			}
		}
	}
	if len(dead) > 0 {
		s.log.Warn("a registry front end ended; its members that did not move are declared dead",
			zap.String("front", fmt.Sprintf("%016x", o.gone)), zap.Int("members", len(dead)))
	}
	for _, m := range dead {
		if !m.gone {
			s.removeMember(m, Died)
		}
	}
}
