package registry

import (
	"errors"
	"fmt"
)

// errStoreLost closes the connections of a front end that lost its shared
// store: its members are not dead, they move to another front end.
var errStoreLost = errors.New("registry front end lost its store")

// startFront begins a session of a shared store: the front end takes its
// new name and the store's epoch, with no pools yet (the store's log
// rebuilds them).
func (s *Server) startFront(front, epoch uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.front, s.epoch = front, epoch
	s.forgetPools()
}

// storeLost drops everything a front end knows when its shared store is
// lost: every connection closes (its member is not declared dead: it
// moves to another front end) and the pools are forgotten until the store
// is back.
func (s *Server) storeLost(cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.member = nil
		c.closeWith(fmt.Errorf("%w: %w", errStoreLost, cause))
	}
	s.forgetPools()
}

// forgetPools drops all pool state. Called with s.mu held.
func (s *Server) forgetPools() {
	for c := range s.conns {
		c.member = nil
	}
	s.pools = make(map[string]*pool)
	s.goneFronts = make(map[uint64]bool)
	s.sources = make(map[string]*sourceUse)
	s.members = 0
	s.waiting = 0
}

// Ready returns nil while the server serves, and otherwise why not: with
// an etcd store, until it has read the pools from etcd, and while it
// cannot reach etcd.
func (s *Server) Ready() error { return s.store.ready() }

// reapplying reports whether the op being applied is one that this process
// applied already, in an earlier session of its shared store: a front end
// that starts anew (it lost etcd, or its lease) forgets its pools and
// rebuilds them from the whole log, and what those ops emitted was printed
// (WithEventLog) and counted (Stats) the first time. Called with s.mu held.
func (s *Server) reapplying() bool {
	e, ok := s.store.(*etcdStore)
	return ok && e.reapplying
}
