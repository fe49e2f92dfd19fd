package hub

import (
	"fmt"
	"sync/atomic"
)

// counters are the server's running statistics.
type counters struct {
	refused, timeouts, relays, forwarded, active, bytes atomic.Int64
}

// Stats is a snapshot of a hub's state and counters.
type Stats struct {
	Conns      int   // connections held now
	Handshakes int   // of those, in their pool check
	Members    int   // registered members
	Pending    int   // relays waiting for their target
	Active     int64 // relayed connections now spliced
	Relays     int64 // relays spliced to a local member, in all
	Forwarded  int64 // relays spliced to another hub, in all
	Refused    int64 // connections and requests refused (pool check, limits)
	Timeouts   int64 // relays whose target did not come
	Bytes      int64 // bytes relayed, both directions, by relays that have ended
}

// Stats returns the hub's state and counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	st := Stats{Conns: len(s.conns), Handshakes: s.handshakes, Members: len(s.members), Pending: len(s.pending)}
	s.mu.Unlock()
	st.Active = s.stats.active.Load()
	st.Relays = s.stats.relays.Load()
	st.Forwarded = s.stats.forwarded.Load()
	st.Refused = s.stats.refused.Load()
	st.Timeouts = s.stats.timeouts.Load()
	st.Bytes = s.stats.bytes.Load()
	return st
}

func (st Stats) String() string {
	return fmt.Sprintf("conns=%d handshakes=%d members=%d pending=%d active=%d relays=%d forwarded=%d refused=%d timeouts=%d bytes=%d",
		st.Conns, st.Handshakes, st.Members, st.Pending, st.Active, st.Relays, st.Forwarded, st.Refused, st.Timeouts, st.Bytes)
}
