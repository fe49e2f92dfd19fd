package registry

import (
	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/addrlist"
)

// loopbackNote is what a pool remembers about members that publish loopback addresses:
// the source address of the first one, and whether the pool has been warned about.
type loopbackNote struct {
	from   string
	warned bool
}

// noteLoopback warns, once per pool, when members that publish a loopback address
// connect from different source addresses: such members are most likely on different
// hosts, where each one's loopback address reaches only itself (set IBIS_HOST, or leave
// it unset so members publish the addresses the registry sees them by). The address
// stays opaque otherwise: it is read leniently and never refused.
func (s *Server) noteLoopback(p *pool, m *member) {
	n := &p.loopback
	if n.warned || !addrlist.HasLoopback(m.id.Address) {
		return
	}
	if n.from == "" {
		n.from = m.source
		return
	}
	if m.source == n.from {
		return
	}
	n.warned = true
	s.log.Warn("members of one pool publish loopback addresses from different hosts: they cannot connect to each other; "+
		"start them without IBIS_HOST, or with IBIS_HOST set to an address the others can reach",
		zap.String("pool", p.name), zap.String("first_source", n.from), zap.String("source", m.source),
		zap.String("address", m.id.Address))
}
