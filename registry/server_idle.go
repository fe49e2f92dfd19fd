package registry

import (
	"context"
	"time"
)

// idlePoll is how often WaitNoMembers looks at the member count.
const idlePoll = 20 * time.Millisecond

// Members returns how many members the server's pools have together.
func (s *Server) Members() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.members
}

// WaitNoMembers returns nil once no pool of the server has a member (they left, or
// were declared dead), or ctx's error when it ends first. A process that serves its
// pool's registry embedded calls it before Close, so that the registry does not vanish
// under members that still use it.
func (s *Server) WaitNoMembers(ctx context.Context) error {
	t := time.NewTicker(idlePoll)
	defer t.Stop()
	for s.Members() > 0 {
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
