package core

import (
	"sync/atomic"

	"github.com/ibisgo/ibis/ipl"
)

// portStats are a port's counters (ipl.PortStats), updated without the port's lock.
type portStats struct {
	messages, bytes              atomic.Int64
	made, closedConns, lostConns atomic.Int64
	reversed, relayed            atomic.Int64
}

func (s *portStats) snapshot() ipl.PortStats {
	return ipl.PortStats{Messages: s.messages.Load(), Bytes: s.bytes.Load(), ConnectionsMade: s.made.Load(),
		ConnectionsClosed: s.closedConns.Load(), ConnectionsLost: s.lostConns.Load(),
		ConnectionsReversed: s.reversed.Load(), ConnectionsRelayed: s.relayed.Load()}
}

// message counts a finished message of n bytes.
func (s *portStats) message(n int64) {
	s.messages.Add(1)
	s.bytes.Add(n)
}

// routed counts a connection set up by a route other than a direct dial.
func (s *portStats) routed(k routeKind) {
	switch k {
	case routeReverse:
		s.reversed.Add(1)
	case routeRelay:
		s.relayed.Add(1)
	}
}

// ended counts a connection that ended, cleanly or not.
func (s *portStats) ended(clean bool) {
	if clean {
		s.closedConns.Add(1)
	} else {
		s.lostConns.Add(1)
	}
}

// Stats counts the port's messages, bytes and connections so far.
func (sp *SendPort) Stats() ipl.PortStats { return sp.stats.snapshot() }

// Stats counts the port's messages, bytes and connections so far.
func (p *ReceivePort) Stats() ipl.PortStats { return p.stats.snapshot() }
