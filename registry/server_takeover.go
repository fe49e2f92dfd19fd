package registry

import (
	"context"
	"fmt"
	"slices"

	"go.uber.org/zap"
)

// With a shared store a member whose front end died, stopped answering or
// lost the store moves to another front end: it rejoins there with its
// identity and the store's epoch (the rejoin of a restart, see
// client_rejoin.go), the takeover op makes the new connection its owner
// at every front end, and its resume is answered with the events it
// missed, from the pool's history, before any newer one. The member sees
// no gap, no repeat and the same order as everyone else; the pool hears
// nothing of the move.

// handleTakeover checks a rejoin at a front end of a shared store and
// turns it into a takeover op.
func (c *serverConn) handleTakeover(m *message) {
	if o := c.decideTakeover(m); o != nil {
		c.submit(o)
	}
}

func (c *serverConn) decideTakeover(m *message) *op {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	id := *m.Rejoin
	if m.Pool == "" || id.Pool != m.Pool {
		c.replyErr(m.ID, codeInvalid, "rejoin of pool %s as %s, a member of another pool", quoteName(m.Pool), id)
		return nil
	}
	if c.refuseJoin(m) {
		return nil
	}
	if m.Epoch != s.epoch {
		c.replyErr(m.ID, codeNotMember, "%s was a member of another registry (epoch %x); this one's store (epoch %x) "+
			"does not know it", id, m.Epoch, s.epoch)
		return nil
	}
	var old *member
	if p := s.pools[m.Pool]; p != nil {
		old = p.byID[id.ID]
	}
	if old == nil || old.gone {
		c.replyErr(m.ID, codeNotMember, "the registry declared %s dead (its connection broke, it was silent, or its "+
			"front end ended before it moved)", id)
		return nil
	}
	if err := s.checkSource(c.source, old.pool, old); err != nil {
		c.log.Warn("rejoin refused: a limit per source address", zap.Stringer("member", id), zap.Error(err))
		c.replyErr(m.ID, codeTooMany, "%v", err)
		return nil
	}
	return &op{kind: opTakeover, front: s.front, conn: c.serial, limits: s.nameLimits(), req: m, local: c}
}

// applyTakeover gives a member to the connection that proposed the op, if
// the member is still alive: its old connection here (if any) lets go
// without a death, and the member is moving until it resumes.
func (s *Server) applyTakeover(o *op, c *serverConn) {
	m := o.req
	id := *m.Rejoin
	var me *member
	p := s.pools[id.Pool]
	if p != nil {
		me = p.byID[id.ID]
	}
	switch {
	case s.goneFronts[o.front]:
		c.replyErr(m.ID, codeUnavailable, "the registry front end ended before the move was recorded; try again")
		return
	case me == nil || me.gone || me.id != id:
		c.replyErr(m.ID, codeNotMember, "the registry declared %s dead before it moved (its connection broke, it was "+
			"silent, or its front end ended)", id)
		return
	case p.size != int(m.PoolSize):
		c.replyErr(m.ID, codePoolSize, "pool %s has size %d (0 = open world), but this member asked for %d",
			quoteName(p.name), p.size, m.PoolSize)
		return
	}
	s.release(me)
	me.owner = ownerRef{o.front, o.conn}
	me.moving = true
	me.restoring = true
	s.rejoins.Add(1)
	if c == nil {
		s.orphan(o, id)
		return
	}
	s.connect(me, c)
	c.log.Info("member moved to this front end", zap.Stringer("member", id))
	c.replyJoin(m.ID, p, id)
}

// release lets go of me's connection here, if it has one, without a death:
// the member is moving to another connection.
func (s *Server) release(me *member) {
	if old := me.conn; old != nil {
		old.member = nil
		old.closeWith(fmt.Errorf("member %s moved to another connection: %w", me.id, ErrClosed))
		s.dropSource(me)
		me.conn, me.source = nil, ""
	}
	for reqID := range me.waiting {
		s.cancelWaiter(me, reqID)
	}
}

// rejoinByToken gives the member that an earlier attempt of the same join
// made (its reply was lost) to the connection of this attempt, which
// hears what it would have heard had the first answer arrived: the Joined
// events of the members before it, every event since its own Joined, and
// the join reply. It reports false, having declared the old member dead,
// when the pool's history no longer reaches back to that Joined event: the
// join then makes a new member.
func (s *Server) rejoinByToken(o *op, c *serverConn, me *member) bool {
	p := me.pool
	missed, ok := p.history.since(me.joinSeq - 1)
	if !ok {
		s.removeMember(me, Died)
		return false
	}
	s.release(me)
	me.owner = ownerRef{o.front, o.conn}
	if c == nil {
		s.orphan(o, me.id)
		return true
	}
	for _, old := range p.members {
		if old.joinSeq >= me.joinSeq {
			break
		}
		if frame, err := old.joinedFrame(); err == nil {
			c.send(frame)
		}
	}
	s.replay(c, me, missed)
	s.connect(me, c)
	c.log.Info("join tried again: the member its first attempt made is given to this connection", zap.Stringer("member", me.id))
	c.replyJoin(o.req.ID, p, me.id)
	return true
}

// resumeMoved answers the resume of a member that moved here: the events
// it missed since lastSeq, in order, then the answer; from then on it gets
// events as they come. A member that missed more than the history keeps
// cannot be brought up to date and is told it is no longer a member.
func (s *Server) resumeMoved(c *serverConn, me *member, reqID, lastSeq uint64) {
	p := me.pool
	missed, ok := p.history.since(lastSeq)
	if !ok {
		c.replyErr(reqID, codeNotMember, "%s missed more events of pool %s than this front end keeps (it saw up to "+
			"%d); it cannot go on as the same member", me.id, quoteName(p.name), lastSeq)
		return
	}
	s.replay(c, me, missed)
	me.moving = false
	me.restoring = false
	c.reply(&message{ID: reqID})
}

// replay sends c the events of missed that went to me.
func (s *Server) replay(c *serverConn, me *member, missed []pastEvent) {
	for _, h := range missed {
		if h.to != nil && !slices.Contains(h.to, me.id.ID) {
			continue
		}
		ev := h.ev
		frame, err := encodeFrame(&message{Kind: kindEvent, Event: &ev})
		if err != nil {
			s.log.Error("cannot encode event", zap.Stringer("event", ev), zap.Error(err))
			continue
		}
		c.send(frame)
	}
}

// submitAsync submits an op that no request waits for (a death found by
// this front end), on a goroutine of the server. Called with s.mu held.
func (s *Server) submitAsync(o *op) {
	if s.closing {
		return // a closing front end declares nobody dead
	}
	s.wg.Go(func() {
		ctx, cancel := context.WithTimeout(s.life, s.cfg.deathTimeout)
		defer cancel()
		if err := s.store.submit(ctx, o); err != nil {
			s.log.Warn("cannot record a death in the store", zap.Stringer("member", *o.req.Member), zap.Error(err))
		}
	})
}

// historyLimit bounds the events a pool keeps for members that move.
const historyLimit = 1 << 16

// history is a pool's recent events, oldest first.
type history struct {
	events []pastEvent
}

// pastEvent is an event and, unless it went to every member, the IDs of
// those it went to.
type pastEvent struct {
	ev Event
	to []string
}

func (h *history) add(ev Event, to []*member, all bool) {
	pe := pastEvent{ev: ev}
	if !all {
		pe.to = make([]string, len(to))
		for i, m := range to {
			pe.to[i] = m.id.ID
		}
	}
	if len(h.events) >= historyLimit {
		h.events = slices.Delete(h.events, 0, historyLimit/2)
	}
	h.events = append(h.events, pe)
}

// since returns the events after seq, and false if some of them are no
// longer kept.
func (h *history) since(seq uint64) ([]pastEvent, bool) {
	i, _ := slices.BinarySearchFunc(h.events, seq+1, func(pe pastEvent, s uint64) int {
		switch {
		case pe.ev.Seq < s:
			return -1
		case pe.ev.Seq > s:
			return 1
		}
		return 0
	})
	if i == 0 && len(h.events) > 0 && h.events[0].ev.Seq > seq+1 {
		return nil, false
	}
	return h.events[i:], true
}
