package registry

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.uber.org/zap"
)

// pool is the state of one pool. All fields are guarded by Server.mu; the
// single lock is what makes the event order total (and registry traffic is
// far too light for it to matter).
type pool struct {
	name       string
	size       int // closed-world size, 0 for an open world
	closed     bool
	terminated bool
	nextID     int
	seq        uint64
	// nameBytes counts the bytes of the names in sequences, elections and
	// names (with port names), against the WithMaxPoolNameBytes limit.
	nameBytes int

	members []*member // in join order
	byID    map[string]*member
	// byToken finds a member by the token of the join that made it
	// (message.JoinToken), for a join tried again (server_takeover.go).
	byToken   map[uint64]*member
	elections map[string]*member
	sequences map[string]int64
	names     map[string]binding
	// Requests waiting for an election winner or a name binding, by name,
	// in arrival order.
	electionWaiters map[string][]*waiter
	lookupWaiters   map[string][]*waiter

	// closedBy and terminatedBy are the Member of the PoolClosed and
	// Terminated events, for members that rejoin without having seen them.
	closedBy     Identifier
	terminatedBy Identifier
	// recovery is set while the pool is rebuilt from its returning
	// members after a restart of the server (server_recovery.go).
	recovery *recovery
	// history keeps the pool's recent events for members that move to
	// this front end from another (shared store only; server_takeover.go).
	history history
	// loopback notes members that publish loopback addresses (server_loopback.go).
	loopback loopbackNote
}

// member is one member of a pool. With a shared store every front end has
// every member; conn is set only at the front end it is connected to.
type member struct {
	id      Identifier
	joinSeq uint64
	// joined is the Joined event (joinSeq) as a frame for the members that
	// join later, encoded once (joinedFrame) rather than once per newcomer.
	joined    []byte
	joinedSeq uint64
	pool      *pool
	conn      *serverConn // nil where the member is not connected
	// owner is the front end and connection the member joined or moved
	// on; ops of any other connection do not act for it.
	owner ownerRef
	// joinToken is the token of the join that made it (0: none).
	joinToken uint64
	gone      bool               // left or died
	waiting   map[uint64]*waiter // by request id
	// nameBytes counts the bytes of the names this member holds (bindings
	// with port names, elections won) and waitBytes those of its waiting
	// requests (known only where it is connected); together they count
	// against the WithMaxMemberNameBytes limit.
	nameBytes int
	waitBytes int

	// source is the IP address the member joined from (per-source
	// limits); empty where the member is not connected.
	source string
	// moving is set from a takeover until the member has resumed: events
	// reach it through the replay of the resume, not directly.
	moving bool

	// restoring is set from a member's rejoin until its resume has been
	// answered; it may then only restore its state, resume or leave.
	restoring bool
	// What the member said in its resume: the last event it saw, and
	// whether it saw the pool close or terminate.
	lastSeq       uint64
	sawClosed     bool
	sawTerminated bool
}

// ownerRef names a connection of a front end.
type ownerRef struct{ front, conn uint64 }

// waiter is a request answered once something exists.
type waiter struct {
	m     *member
	reqID uint64
	kind  msgKind // kindElectionResult or kindLookup
	name  string
}

type binding struct {
	owner *member
	port  string
}

func newPool(name string, size int) *pool {
	return &pool{
		name:            name,
		size:            size,
		byID:            make(map[string]*member),
		byToken:         make(map[uint64]*member),
		elections:       make(map[string]*member),
		sequences:       make(map[string]int64),
		names:           make(map[string]binding),
		electionWaiters: make(map[string][]*waiter),
		lookupWaiters:   make(map[string][]*waiter),
	}
}

// emit appends an event to the pool's total order and queues it for the
// given members. An event that an op applied again emits (a shared store's
// front end that started anew reads its log again, see reapplying) was
// printed and counted the first time: it is not again. Called with s.mu
// held.
func (s *Server) emit(p *pool, t EventType, who Identifier, name string, to []*member) Event {
	p.seq++
	ev := Event{Seq: p.seq, Type: t, Member: who, Name: name}
	again := s.reapplying()
	if !again {
		s.events.Add(1)
	}
	frame, err := encodeFrame(&message{Kind: kindEvent, Event: &ev})
	if err != nil {
		// Encoding into memory cannot fail; if it ever does, say so loudly.
		s.log.Error("cannot encode event", zap.Stringer("event", ev), zap.Error(err))
		return ev
	}
	for _, m := range to {
		if !m.moving {
			m.conn.send(frame)
		}
	}
	if s.store.shared() {
		p.history.add(ev, to, len(to) == len(p.members))
	}
	if w := s.cfg.eventLog; w != nil && !again {
		if _, err := fmt.Fprintf(w, "%s %s\n", time.Now().Format(time.RFC3339Nano), ev); err != nil {
			s.log.Warn("cannot write event log", zap.Error(err))
		}
	}
	return ev
}

// addMember creates the member for a join owned by who, sends it (on c,
// where it is connected here) the Joined events of the members already
// present, and announces it to everyone (itself included). Called with
// s.mu held.
func (s *Server) addMember(p *pool, c *serverConn, who ownerRef, address, tag string, token uint64) *member {
	m := &member{
		id:        Identifier{Pool: p.name, ID: strconv.Itoa(p.nextID), Address: address, Tag: tag},
		pool:      p,
		owner:     who,
		joinToken: token,
	}
	if token != 0 {
		p.byToken[token] = m
	}
	p.nextID++
	if c != nil {
		for _, old := range p.members {
			frame, err := old.joinedFrame()
			if err != nil {
				s.log.Error("cannot encode event", zap.Stringer("member", old.id), zap.Error(err))
				continue
			}
			c.send(frame)
		}
	}
	p.members = append(p.members, m)
	p.byID[m.id.ID] = m
	s.members++
	if c != nil {
		s.connect(m, c)
		s.noteLoopback(p, m)
	}
	if !s.reapplying() {
		s.joins.Add(1)
	}
	m.joinSeq = s.emit(p, Joined, m.id, "", p.members).Seq
	if p.size > 0 && p.nextID >= p.size {
		p.closed = true
		p.closedBy = m.id
		s.emit(p, PoolClosed, m.id, "", p.members)
	}
	return m
}

// joinedFrame returns m's Joined event as a frame. Frames are never
// changed once queued, so one serves every connection. Called with s.mu
// held.
func (m *member) joinedFrame() ([]byte, error) {
	if m.joined == nil || m.joinedSeq != m.joinSeq {
		frame, err := encodeFrame(&message{Kind: kindEvent, Event: &Event{Seq: m.joinSeq, Type: Joined, Member: m.id}})
		if err != nil {
			return nil, err
		}
		m.joined, m.joinedSeq = frame, m.joinSeq
	}
	return m.joined, nil
}

// removeMember takes a member out of its pool because it left or died: its
// waiting requests, elections and bound names go with it, and the others
// hear of it. An empty pool is forgotten, so its name can start afresh.
// In a pool being rebuilt nobody hears of it yet (see leaveRecovering).
// It returns the event the others heard, and false when there was none.
// Called with s.mu held.
func (s *Server) removeMember(m *member, t EventType) (Event, bool) {
	p := m.pool
	if p.recovery != nil {
		s.leaveRecovering(m, t)
		return Event{}, false
	}
	s.detach(m)
	switch {
	case s.reapplying():
	case t == Left:
		s.leaves.Add(1)
	default:
		s.deaths.Add(1)
	}
	ev := s.emit(p, t, m.id, "", p.members)
	if t == Died {
		s.log.Warn("member declared dead", zap.Stringer("member", m.id))
	} else {
		s.log.Info("member removed", zap.Stringer("member", m.id), zap.Stringer("why", t))
	}
	if len(p.members) == 0 {
		delete(s.pools, p.name)
		s.log.Info("pool ended", zap.String("pool", p.name))
	}
	return ev, true
}

// detach takes m out of its pool's member list and releases everything it
// holds there (waiting requests, elections won, bound names), without
// telling anyone. Called with s.mu held.
func (s *Server) detach(m *member) {
	p := m.pool
	m.gone = true
	p.members = slices.DeleteFunc(p.members, func(x *member) bool { return x == m })
	delete(p.byID, m.id.ID)
	if p.byToken[m.joinToken] == m {
		delete(p.byToken, m.joinToken)
	}
	for _, w := range m.waiting {
		s.dropWaiter(w)
	}
	m.waiting = nil
	m.waitBytes = 0
	for name, winner := range p.elections {
		if winner == m {
			delete(p.elections, name)
			p.nameBytes -= len(name)
		}
	}
	for name, b := range p.names {
		if b.owner == m {
			p.unbind(name, b)
		}
	}
	m.nameBytes = 0
	s.members--
	s.dropSource(m)
}

// unbind removes the binding b of name and its bytes from the counts.
func (p *pool) unbind(name string, b binding) {
	delete(p.names, name)
	n := len(name) + len(b.port)
	p.nameBytes -= n
	b.owner.nameBytes -= n
}

// checkMemberBytes tells whether m may hold n more bytes of names, where
// held (its bindings and elections won) may grow to budget. The budget is
// the server's limit less the bytes of the member's waiting requests.
func checkMemberBytes(m *member, n int, budget uint64) error {
	if uint64(m.nameBytes)+uint64(n) > budget {
		return fmt.Errorf("member %s holds %d bytes of names (bound names, elections won; its waiting requests leave it "+
			"%d); %d more would exceed the server's limit per member", m.id, m.nameBytes, budget, n)
	}
	return nil
}

// memberBudget is how many bytes of names m may hold beside its waiting
// requests, under this server's limit.
func (s *Server) memberBudget(m *member) uint64 {
	return uint64(max(s.cfg.maxMemberNameBytes-m.waitBytes, 0))
}

// checkPoolNames tells whether pool p may hold one more of what it now
// has count of, with a name of n bytes, under the limits lim.
func checkPoolNames(p *pool, lim nameLimits, what string, count, n int) error {
	if limit := int(lim.poolNames); count >= limit {
		return fmt.Errorf("pool %s already has %d %s, the server's limit per pool", quoteName(p.name), count, what)
	}
	if limit := int(lim.poolNameBytes); p.nameBytes+n > limit {
		return fmt.Errorf("pool %s holds %d bytes of names (sequences, elections, bound names); "+
			"%d more would exceed the server's limit of %d bytes per pool", quoteName(p.name), p.nameBytes, n, limit)
	}
	return nil
}

// addWaiter parks a request until its answer exists. Called with s.mu held.
func (s *Server) addWaiter(m *member, reqID uint64, kind msgKind, name string) error {
	if len(m.waiting) >= s.cfg.maxWaiting {
		return fmt.Errorf("member %s already has %d waiting requests, the server's limit per member", m.id, len(m.waiting))
	}
	if _, dup := m.waiting[reqID]; dup {
		return fmt.Errorf("request id %d is already waiting", reqID)
	}
	if limit := s.cfg.maxMemberNameBytes; m.nameBytes+m.waitBytes+len(name) > limit {
		return fmt.Errorf("member %s holds %d bytes of names (waiting requests, bound names, elections won); "+
			"%d more would exceed the server's limit of %d bytes per member", m.id, m.nameBytes+m.waitBytes, len(name), limit)
	}
	w := &waiter{m: m, reqID: reqID, kind: kind, name: name}
	if m.waiting == nil {
		m.waiting = make(map[uint64]*waiter)
	}
	m.waiting[reqID] = w
	m.waitBytes += len(name)
	p := m.pool
	if kind == kindElectionResult {
		p.electionWaiters[name] = append(p.electionWaiters[name], w)
	} else {
		p.lookupWaiters[name] = append(p.lookupWaiters[name], w)
	}
	s.waiting++
	return nil
}

// dropWaiter removes a waiter from its pool's lists (not from m.waiting).
func (s *Server) dropWaiter(w *waiter) {
	p := w.m.pool
	lists := p.lookupWaiters
	if w.kind == kindElectionResult {
		lists = p.electionWaiters
	}
	rest := slices.DeleteFunc(lists[w.name], func(x *waiter) bool { return x == w })
	if len(rest) == 0 {
		delete(lists, w.name)
	} else {
		lists[w.name] = rest
	}
	w.m.waitBytes -= len(w.name)
	s.waiting--
}

// cancelWaiter drops the waiting request reqID of m, if there is one.
func (s *Server) cancelWaiter(m *member, reqID uint64) {
	if w, ok := m.waiting[reqID]; ok {
		delete(m.waiting, reqID)
		s.dropWaiter(w)
	}
}

// takeWaiters removes and returns every waiter for name in lists.
func (s *Server) takeWaiters(lists map[string][]*waiter, name string) []*waiter {
	ws := lists[name]
	delete(lists, name)
	for _, w := range ws {
		delete(w.m.waiting, w.reqID)
		w.m.waitBytes -= len(w.name)
		s.waiting--
	}
	return ws
}

// sourceUse is what the members from one source address hold: how many
// they are, and how many of them are in each pool.
type sourceUse struct {
	members int
	pools   map[*pool]int
}

// checkSource tells whether one more member from source src may join pool
// p (nil: a pool to be created); replacing, if not nil, is a member that
// the new one replaces (the same member back on a new connection), which
// does not count. Called with s.mu held.
func (s *Server) checkSource(src string, p *pool, replacing *member) error {
	u := s.sources[src]
	if u == nil {
		return nil
	}
	members := u.members
	inPool := p != nil && u.pools[p] > 0
	if replacing != nil && replacing.source == src && !replacing.gone {
		members--
	}
	if limit := s.cfg.maxMembersPerSource; limit > 0 && members >= limit {
		return fmt.Errorf("address %s already has %d members at this registry, the server's limit per source address",
			src, members)
	}
	if limit := s.cfg.maxPoolsPerSource; limit > 0 && !inPool && len(u.pools) >= limit {
		return fmt.Errorf("address %s already has members in %d pools at this registry, the server's limit per source address",
			src, len(u.pools))
	}
	return nil
}

// addSource counts a new member against its source. Called with s.mu held.
func (s *Server) addSource(m *member) {
	u := s.sources[m.source]
	if u == nil {
		u = &sourceUse{pools: make(map[*pool]int)}
		s.sources[m.source] = u
	}
	u.members++
	u.pools[m.pool]++
}

// dropSource releases what addSource counted. Called with s.mu held.
func (s *Server) dropSource(m *member) {
	u := s.sources[m.source]
	if m.source == "" || u == nil {
		return
	}
	u.members--
	if u.pools[m.pool]--; u.pools[m.pool] <= 0 {
		delete(u.pools, m.pool)
	}
	if u.members <= 0 {
		delete(s.sources, m.source)
	}
}
