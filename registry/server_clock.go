package registry

import (
	"time"

	"go.uber.org/zap"
)

// watchClock ticks every half heartbeat interval until the server closes,
// feeding the server's stallClock: a tick later than a whole period means
// the server did not run meanwhile, and no member is blamed for that time
// (see serverConn.awaitFrame). A stall longer than a heartbeat interval is
// logged.
func (s *Server) watchClock() {
	defer s.wg.Done()
	period := s.cfg.heartbeat / 2
	t := time.NewTicker(period)
	defer t.Stop()
	last := s.clock.now()
	for {
		select {
		case <-t.C:
		case <-s.quit:
			return
		}
		now := s.clock.now()
		if late := s.clock.tick(now-last, period); late > s.cfg.heartbeat {
			s.log.Warn("the registry server itself did not run for a while; no member is blamed for that time",
				zap.Duration("stalled", late.Round(time.Millisecond)))
		}
		last = now
	}
}
