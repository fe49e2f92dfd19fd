package registry

import (
	"time"

	"go.uber.org/zap"
)

// The server judges a member by how long it has heard nothing from it. Time
// in which the server itself did not run (it was stopped with SIGSTOP, its
// virtual machine was paused, it was swapped out or starved of CPU) says
// nothing about the members, so the server watches its own scheduling: a
// goroutine that only ticks notices when a tick comes much later than due,
// and then counts every member as heard of at that moment (see
// serverConn.awaitFrame). Times are offsets of the monotonic clock from
// Server.base.

// clockGap is how late a tick of the server's own clock may be before the
// server takes the delay for a stall of its own: one heartbeat interval,
// far above the scheduling noise of a busy machine at the default, and
// below the death timeout (which is at least one interval).
func (s *Server) clockGap() time.Duration { return s.cfg.heartbeat }

// now returns the server's monotonic clock reading.
func (s *Server) now() time.Duration { return time.Since(s.base) }

// watchClock ticks every half heartbeat interval until the server closes,
// and records in s.stalledAt when it finds that the server did not run for
// longer than clockGap.
func (s *Server) watchClock() {
	defer s.wg.Done()
	period := s.cfg.heartbeat / 2
	t := time.NewTicker(period)
	defer t.Stop()
	last := s.now()
	for {
		select {
		case <-t.C:
		case <-s.quit:
			return
		}
		now := s.now()
		if late := now - last - period; late > s.clockGap() {
			s.stalledAt.Store(int64(now))
			s.log.Warn("the registry server itself did not run for a while; no member is blamed for that time",
				zap.Duration("stalled", (late+period).Round(time.Millisecond)))
		}
		last = now
	}
}
