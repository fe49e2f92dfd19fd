package registry

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"go.uber.org/zap"
)

// A restarted server knows nothing; the members of its pools come back and
// rebuild them (see "Registry restarts" in the package doc). A member that
// lost a server of another run (another epoch) rejoins with its identity,
// restores what it holds (elections won, names bound, sequence numbers
// drawn) and the members it knows, and resumes. The pool is "recovering"
// from the first rejoin until every member some returning member knows of
// is back and has resumed, or until no member came back for the recovery
// grace period; then the missing ones are declared dead, every resumed
// member hears what it missed, and the resumes are answered. Meanwhile new
// members wait (codeRecovering) and the returning members may only restore,
// resume or leave, so nobody can take an election or a name that its owner
// is about to restore, nor a member number that is in use.

// recovery is the state of a pool while it is being rebuilt. Guarded by
// Server.mu.
type recovery struct {
	timer *time.Timer // completes the rebuild after the grace period
	// expected holds the members that a returning member knows of and that
	// have not come back, by ID; their bytes count in the pool's names.
	expected map[string]Identifier
	// left holds the members that came back and then left before the pool
	// was rebuilt: the others hear Left for them at the end.
	left map[string]Identifier
	// waiting holds the members that have resumed, by their resume request
	// id: they are answered when the pool is rebuilt.
	waiting map[*member]uint64
}

// memberNumber parses a member ID as the server hands them out: a decimal
// number without sign or leading zeros, at most maxMemberNumber.
func memberNumber(id string) (int, bool) {
	n, err := strconv.Atoi(id)
	if err != nil || n < 0 || n > maxMemberNumber || strconv.Itoa(n) != id {
		return 0, false
	}
	return n, true
}

// identifierBytes is what an expected member costs against the pool's
// bytes of names.
func identifierBytes(id Identifier) int {
	return len(id.Pool) + len(id.ID) + len(id.Address) + len(id.Tag)
}

// handleRejoin takes back a member of a previous run of the server: it
// creates the pool (recovering) if it is not there, or adds the member to
// the pool being rebuilt. A member of this very run, one of a pool that
// carries on without it, or one that left, is refused with codeNotMember,
// which the client takes as final.
func (c *serverConn) handleRejoin(m *message) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	id := *m.Rejoin
	num, numOK := memberNumber(id.ID)
	switch {
	case c.member != nil:
		c.replyErr(m.ID, codeInvalid, "this connection already joined as %s", c.member.id)
		return
	case m.Version < 2:
		c.replyErr(m.ID, codeInvalid, "rejoining needs protocol version 2 or later, the client speaks %d", m.Version)
		return
	case m.Pool == "" || id.Pool != m.Pool:
		c.replyErr(m.ID, codeInvalid, "rejoin of pool %s as %s, a member of another pool", quoteName(m.Pool), id)
		return
	case !numOK:
		c.replyErr(m.ID, codeInvalid, "rejoin as %s: %s is not a member number", id, quoteName(id.ID))
		return
	case m.PoolSize < 0 || m.PoolSize > maxPoolSize:
		c.replyErr(m.ID, codeInvalid, "pool size %d out of range [0, %d]", m.PoolSize, maxPoolSize)
		return
	case s.closing:
		c.replyErr(m.ID, codeClosed, "the server is shutting down")
		return
	}
	if m.Epoch == s.epoch {
		// A member that joined (or finished rejoining) this very run and
		// lost its connection: this server declared it dead when the
		// connection broke (or does so now).
		if p := s.pools[m.Pool]; p != nil {
			if old := p.byID[id.ID]; old != nil && old.id == id && !old.gone {
				old.conn.closeWith(fmt.Errorf("member %s came back on another connection", id))
				s.removeMember(old, Died)
			}
		}
		c.replyErr(m.ID, codeNotMember, "this registry has run since %s joined it, and declared it dead when its connection broke", id)
		return
	}
	size := int(m.PoolSize)
	p := s.pools[m.Pool]
	var old *member
	if p != nil {
		old = p.byID[id.ID]
	}
	if err := s.checkSource(c.source, p, old); err != nil {
		c.log.Warn("rejoin refused: a limit per source address", zap.Stringer("member", id), zap.Error(err))
		c.replyErr(m.ID, codeTooMany, "%v", err)
		return
	}
	switch {
	case p == nil:
		p = newPool(m.Pool, size)
		s.pools[m.Pool] = p
		s.startRecovery(p)
		c.log.Info("rebuilding a pool from the members of a previous run of the registry",
			zap.String("pool", p.name), zap.Duration("grace", s.cfg.recoveryGrace))
	case p.recovery == nil:
		c.replyErr(m.ID, codeNotMember, "pool %s carries on without %s: the member did not come back within the "+
			"recovery grace period after the registry restarted and was declared dead, or the pool was started afresh",
			quoteName(p.name), id)
		return
	case p.size != size:
		c.replyErr(m.ID, codePoolSize, "pool %s has size %d (0 = open world), but this member asked for %d",
			quoteName(p.name), p.size, size)
		return
	}
	rec := p.recovery
	if _, ok := rec.left[id.ID]; ok {
		c.replyErr(m.ID, codeNotMember, "%s left pool %s while it was being rebuilt", id, quoteName(p.name))
		return
	}
	if old := p.byID[id.ID]; old != nil {
		if old.id != id {
			c.replyErr(m.ID, codeInvalid, "member %s of pool %s came back as %s", old.id, quoteName(p.name), id)
			return
		}
		// The same member on a new connection: its earlier one broke
		// (or is about to) while the pool was being rebuilt. It restores
		// and resumes anew.
		old.conn.closeWith(fmt.Errorf("member %s came back on another connection", id))
		s.detach(old)
		delete(rec.waiting, old)
	}
	me := &member{id: id, pool: p, conn: c, owner: ownerRef{s.front, c.serial}, restoring: true, source: c.source}
	i, _ := slices.BinarySearchFunc(p.members, num, func(x *member, n int) int { return cmp.Compare(x.id.Number(), n) })
	p.members = slices.Insert(p.members, i, me)
	p.byID[id.ID] = me
	s.forgetExpected(p, id.ID)
	p.nextID = max(p.nextID, num+1)
	c.member = me
	c.joined.Store(true)
	s.unjoinedGone(c.source)
	s.members++
	s.addSource(me)
	s.rejoins.Add(1)
	s.touchRecovery(p)
	c.log = c.log.With(zap.Stringer("member", me.id))
	c.log.Info("member rejoined after a restart of the registry")
	c.replyJoin(m.ID, p, id)
}

// handleRestore takes what a rejoining member holds (elections won, names
// bound, sequence numbers drawn) and the members it knows. Claims that
// conflict with what the pool already has, or that exceed a limit, are
// dropped and logged; members it knows that are not back are waited for,
// or, if the pool has already been rebuilt without them, reported to it
// as dead.
func (c *serverConn) handleRestore(me *member, m *message) {
	if !me.restoring {
		c.replyErr(m.ID, codeInvalid, "restore is only for a member that rejoined and has not resumed")
		return
	}
	s := c.s
	if s.store.shared() {
		// The store holds the member's state; nothing to take back.
		c.reply(&message{ID: m.ID})
		return
	}
	p := me.pool
	for _, name := range m.Won {
		if name == "" {
			continue
		}
		if w, ok := p.elections[name]; ok {
			if w != me {
				c.log.Warn("restore: election already has another winner", zap.String("election", name),
					zap.Stringer("winner", w.id))
			}
			continue
		}
		n := len(name)
		err := checkMemberBytes(me, n, s.memberBudget(me))
		if err == nil {
			err = checkPoolNames(p, s.nameLimits(), "elections", len(p.elections), n)
		}
		if err != nil {
			c.log.Warn("restore: election dropped", zap.String("election", name), zap.Error(err))
			continue
		}
		me.nameBytes += n
		p.nameBytes += n
		p.elections[name] = me
		for _, w := range s.takeWaiters(p.electionWaiters, name) {
			id := me.id
			w.m.conn.reply(&message{ID: w.reqID, Member: &id})
		}
	}
	for _, b := range m.Bound {
		if b.Name == "" {
			continue
		}
		if old, ok := p.names[b.Name]; ok {
			if old.owner != me {
				c.log.Warn("restore: name already bound by another member", zap.String("name", b.Name),
					zap.Stringer("owner", old.owner.id))
			}
			continue
		}
		n := len(b.Name) + len(b.Port)
		err := checkMemberBytes(me, n, s.memberBudget(me))
		if err == nil {
			err = checkPoolNames(p, s.nameLimits(), "bound names", len(p.names), n)
		}
		if err != nil {
			c.log.Warn("restore: bound name dropped", zap.String("name", b.Name), zap.Error(err))
			continue
		}
		me.nameBytes += n
		p.nameBytes += n
		p.names[b.Name] = binding{owner: me, port: b.Port}
		for _, w := range s.takeWaiters(p.lookupWaiters, b.Name) {
			id := me.id
			w.m.conn.reply(&message{ID: w.reqID, Member: &id, Port: b.Port})
		}
	}
	for _, q := range m.Seqs {
		if q.Name == "" || q.Next < 0 {
			continue
		}
		v, ok := p.sequences[q.Name]
		if !ok {
			if err := checkPoolNames(p, s.nameLimits(), "sequences", len(p.sequences), len(q.Name)); err != nil {
				c.log.Warn("restore: sequence dropped", zap.String("sequence", q.Name), zap.Error(err))
				continue
			}
			p.nameBytes += len(q.Name)
		}
		p.sequences[q.Name] = max(v, q.Next)
	}
	for _, id := range m.Members {
		num, ok := memberNumber(id.ID)
		if !ok || id.Pool != p.name {
			continue
		}
		p.nextID = max(p.nextID, num+1)
		if p.byID[id.ID] != nil {
			continue
		}
		if rec := p.recovery; rec != nil {
			if _, left := rec.left[id.ID]; !left {
				s.expect(p, id)
			}
			continue
		}
		// Rebuilt without it: it did not come back in time.
		s.emit(p, Died, id, "", []*member{me})
	}
	s.touchRecovery(p)
	c.reply(&message{ID: m.ID})
}

// handleResume ends a member's rejoin: it takes where the member stands
// in the pool's event order, and answers once the pool is rebuilt (at once
// if it already is).
func (c *serverConn) handleResume(me *member, m *message) {
	if !me.restoring {
		c.replyErr(m.ID, codeInvalid, "resume is only for a member that rejoined and has not resumed")
		return
	}
	if m.NextNum > maxMemberNumber+1 {
		c.replyErr(m.ID, codeInvalid, "member number %d out of range", m.NextNum)
		return
	}
	s := c.s
	if s.store.shared() {
		s.resumeMoved(c, me, m.ID, m.LastSeq)
		return
	}
	p := me.pool
	me.lastSeq = m.LastSeq
	me.joinSeq = m.JoinSeq
	p.seq = max(p.seq, m.LastSeq, m.JoinSeq)
	p.nextID = max(p.nextID, int(m.NextNum))
	if m.Flags&flagSawClosed != 0 {
		me.sawClosed = true
		if p.size > 0 && !p.closed {
			p.closed = true
			p.closedBy = me.id
		}
	}
	if m.Flags&flagSawTerminated != 0 {
		me.sawTerminated = true
		if !p.terminated {
			p.terminated = true
			p.terminatedBy = me.id
			if t := m.Member; t != nil && t.Pool == p.name {
				p.terminatedBy = *t
			}
		}
	}
	if rec := p.recovery; rec != nil {
		rec.waiting[me] = m.ID
		s.touchRecovery(p)
		s.checkRecovery(p)
		return
	}
	s.replayJoined(me)
	s.finishResume(me, m.ID)
}

// startRecovery marks p as being rebuilt and starts its grace timer, which
// the server's wait group counts until it has run or been stopped.
func (s *Server) startRecovery(p *pool) {
	rec := &recovery{
		expected: make(map[string]Identifier),
		left:     make(map[string]Identifier),
		waiting:  make(map[*member]uint64),
	}
	p.recovery = rec
	s.wg.Add(1)
	rec.timer = time.AfterFunc(s.cfg.recoveryGrace, func() {
		defer s.wg.Done()
		s.mu.Lock()
		defer s.mu.Unlock()
		if p.recovery != rec || s.closing {
			return
		}
		s.completeRecovery(p, fmt.Sprintf("no member came back for %v (the recovery grace period)", s.cfg.recoveryGrace))
	})
}

// touchRecovery restarts p's grace period: a member just came back (or
// made progress), so the others may be on their way too.
func (s *Server) touchRecovery(p *pool) {
	if rec := p.recovery; rec != nil && rec.timer.Stop() {
		rec.timer.Reset(s.cfg.recoveryGrace)
	}
}

// stopRecoveryTimer stops the grace timer of rec for good.
func (s *Server) stopRecoveryTimer(rec *recovery) {
	if rec.timer.Stop() {
		s.wg.Done()
	}
}

// expect records a member that has not come back, within the pool's bytes
// of names (beyond it the member is not waited for; it can still come
// back while the pool is being rebuilt).
func (s *Server) expect(p *pool, id Identifier) {
	rec := p.recovery
	if _, ok := rec.expected[id.ID]; ok {
		return
	}
	n := identifierBytes(id)
	if p.nameBytes+n > s.cfg.maxPoolNameBytes {
		s.log.Warn("not waiting for a member: the pool's names are at the server's limit",
			zap.Stringer("member", id), zap.Int("limit", s.cfg.maxPoolNameBytes))
		return
	}
	rec.expected[id.ID] = id
	p.nameBytes += n
}

// forgetExpected drops the member id from those p waits for.
func (s *Server) forgetExpected(p *pool, id string) {
	rec := p.recovery
	if e, ok := rec.expected[id]; ok {
		delete(rec.expected, id)
		p.nameBytes -= identifierBytes(e)
	}
}

// leaveRecovering takes a member out of a pool being rebuilt. One that
// left is announced as Left when the pool is rebuilt; one whose connection
// broke is waited for again (see dropRestoring).
func (s *Server) leaveRecovering(m *member, t EventType) {
	p := m.pool
	if t != Left {
		s.dropRestoring(m)
		return
	}
	rec := p.recovery
	s.detach(m)
	delete(rec.waiting, m)
	rec.left[m.id.ID] = m.id
	s.leaves.Add(1)
	s.log.Info("member left a pool being rebuilt", zap.Stringer("member", m.id))
	if len(p.members) == 0 {
		s.abandonRecovery(p)
		return
	}
	s.checkRecovery(p)
}

// dropRestoring takes a member whose connection broke out of a pool being
// rebuilt, without a word to anyone: it is waited for again like the
// members that have not come back. A pool nobody is back in any more is
// forgotten; the next member to come back starts its rebuild anew.
func (s *Server) dropRestoring(m *member) {
	p := m.pool
	s.detach(m)
	delete(p.recovery.waiting, m)
	s.expect(p, m.id)
	if len(p.members) == 0 {
		s.abandonRecovery(p)
	}
}

// abandonRecovery forgets a pool being rebuilt that has nobody in it.
func (s *Server) abandonRecovery(p *pool) {
	s.stopRecoveryTimer(p.recovery)
	p.recovery = nil
	delete(s.pools, p.name)
	s.log.Info("pool given up: nobody is back in it", zap.String("pool", p.name))
}

// checkRecovery completes p's rebuild once every member known is back and
// every member back has resumed.
func (s *Server) checkRecovery(p *pool) {
	rec := p.recovery
	if rec == nil || len(rec.expected) > 0 {
		return
	}
	for _, m := range p.members {
		if _, ok := rec.waiting[m]; m.restoring && !ok {
			return
		}
	}
	s.completeRecovery(p, "every member known is back")
}

// completeRecovery ends p's rebuild: the members that resumed hear of the
// members they had missed (Joined, with their first numbers), then
// everyone hears that the members that did not come back died and that
// those that left are gone (new numbers), and the resumes are answered.
// Members that came back but have not resumed yet carry on when they do.
func (s *Server) completeRecovery(p *pool, why string) {
	rec := p.recovery
	p.recovery = nil
	s.stopRecoveryTimer(rec)
	waiting := slices.SortedFunc(maps.Keys(rec.waiting), func(a, b *member) int {
		return cmp.Compare(a.id.Number(), b.id.Number())
	})
	for _, m := range waiting {
		s.replayJoined(m)
	}
	byNumber := func(a, b Identifier) int { return cmp.Compare(a.Number(), b.Number()) }
	dead := slices.SortedFunc(maps.Values(rec.expected), byNumber)
	for _, id := range dead {
		p.nameBytes -= identifierBytes(id)
		s.deaths.Add(1)
		s.emit(p, Died, id, "", p.members)
		s.log.Info("member did not come back after the registry restarted; declared dead", zap.Stringer("member", id))
	}
	for _, id := range slices.SortedFunc(maps.Values(rec.left), byNumber) {
		s.emit(p, Left, id, "", p.members)
	}
	if p.size > 0 && !p.closed && p.nextID >= p.size && len(p.members) > 0 {
		p.closed = true
		p.closedBy = p.members[len(p.members)-1].id
		s.emit(p, PoolClosed, p.closedBy, "", p.members)
		for _, m := range p.members {
			m.sawClosed = true
		}
	}
	for _, m := range waiting {
		s.finishResume(m, rec.waiting[m])
	}
	s.log.Info("pool rebuilt after a restart of the registry", zap.String("pool", p.name), zap.String("why", why),
		zap.Int("members", len(p.members)), zap.Int("dead", len(dead)), zap.Int("left", len(rec.left)))
	if len(p.members) == 0 {
		delete(s.pools, p.name)
		s.log.Info("pool ended", zap.String("pool", p.name))
	}
}

// replayJoined sends m the Joined events, with their first numbers, of
// the members that joined after the last event m saw: it knows all the
// others.
func (s *Server) replayJoined(m *member) {
	for _, o := range m.pool.members {
		if o == m || o.joinSeq <= m.lastSeq {
			continue
		}
		frame, err := o.joinedFrame()
		if err != nil {
			s.log.Error("cannot encode event", zap.Stringer("member", o.id), zap.Error(err))
			continue
		}
		m.conn.send(frame)
	}
}

// finishResume ends m's rejoin: it hears that the pool closed or ended if
// it had not, and its resume is answered.
func (s *Server) finishResume(m *member, reqID uint64) {
	p := m.pool
	m.restoring = false
	if p.closed && p.size > 0 && !m.sawClosed {
		m.sawClosed = true
		s.emit(p, PoolClosed, p.closedBy, "", []*member{m})
	}
	if p.terminated && !m.sawTerminated {
		m.sawTerminated = true
		s.emit(p, Terminated, p.terminatedBy, "", []*member{m})
	}
	m.conn.reply(&message{ID: reqID})
}
