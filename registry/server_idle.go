package registry

import (
	"context"
	"time"
)

// idlePoll is how often WaitIdle looks at the counts.
const idlePoll = 20 * time.Millisecond

// Members returns how many members the server's pools have together.
func (s *Server) Members() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.members
}

// WaitIdle returns nil once no pool of the server has a member (they left, or were
// declared dead) and every client has closed its connection (a member that left has
// read the answer to its leave), or ctx's error when it ends first. A process that
// serves its pool's registry embedded calls it before Close, so that the registry does
// not vanish under members that still use it.
func (s *Server) WaitIdle(ctx context.Context) error {
	t := time.NewTicker(idlePoll)
	defer t.Stop()
	for !s.idle() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.quit:
			return ErrClosed
		case <-t.C:
		}
	}
	return nil
}

func (s *Server) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.members == 0 && len(s.conns) == 0
}
