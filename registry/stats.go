package registry

import "fmt"

// Stats is a snapshot of a server's activity, for monitoring (the -stats
// flag of cmd/ibis-registry) and for tests that need to know the server's
// state without guessing from timing.
type Stats struct {
	Pools       int    // pools with at least one member
	Members     int    // members over all pools
	Connections int    // open client connections, joined or not
	Waiting     int    // requests waiting for an answer (ElectionResult, Lookup)
	Recovering  int    // pools being rebuilt by their members after a restart
	Events      uint64 // events emitted since the server started
	Joins       uint64 // successful joins since start
	Leaves      uint64 // clean leaves since start
	Deaths      uint64 // members declared dead since start
	Rejoins     uint64 // members of a previous run that came back since start
	Accepted    uint64 // connections accepted since start
	Refused     uint64 // connections refused in the TLS or pool handshake since start
	BytesIn     uint64 // bytes read from clients
	BytesOut    uint64 // bytes written to clients
}

// String formats the statistics on one line.
func (st Stats) String() string {
	return fmt.Sprintf("pools=%d members=%d connections=%d waiting=%d recovering=%d events=%d joins=%d leaves=%d deaths=%d rejoins=%d accepted=%d refused=%d bytes_in=%d bytes_out=%d",
		st.Pools, st.Members, st.Connections, st.Waiting, st.Recovering, st.Events, st.Joins, st.Leaves, st.Deaths,
		st.Rejoins, st.Accepted, st.Refused, st.BytesIn, st.BytesOut)
}

// Stats returns a snapshot of the server's statistics.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	st := Stats{
		Pools:       len(s.pools),
		Members:     s.members,
		Connections: len(s.conns),
		Waiting:     s.waiting,
	}
	for _, p := range s.pools {
		if p.recovery != nil {
			st.Recovering++
		}
	}
	s.mu.Unlock()
	st.Events = s.events.Load()
	st.Joins = s.joins.Load()
	st.Leaves = s.leaves.Load()
	st.Deaths = s.deaths.Load()
	st.Rejoins = s.rejoins.Load()
	st.Accepted = s.accepted.Load()
	st.Refused = s.refused.Load()
	st.BytesIn = s.bytesIn.Load()
	st.BytesOut = s.bytesOut.Load()
	return st
}
