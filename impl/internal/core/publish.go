package core

import (
	"net"
	"strconv"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/addrlist"
	"github.com/ibisgo/ibis/registry"
)

// publish is the registry option that publishes where the transport accepts
// connections. A transport listening on one host publishes that address. One listening
// on all interfaces (no IBIS_HOST, or a wildcard one) publishes the list addrlist.Choose
// makes once the registry has been reached: the local address of that connection first,
// then the host's other addresses, or loopback alone when the registry is on loopback.
//
// With hubs (hubs.go) the route fields follow the list: the member registers at its hubs
// when the list is first known.
func (in *Instance) publish(listening string) registry.Option {
	if !addrlist.IsWildcard(listening) {
		if len(in.cfg.Hubs) == 0 {
			return registry.WithAddress(listening)
		}
		return registry.WithAddressFunc(func(net.Addr) string { return in.publishedWith(listening) })
	}
	_, p, _ := net.SplitHostPort(listening)
	port, _ := strconv.Atoi(p)
	return registry.WithAddressFunc(func(local net.Addr) string {
		ifaces, err := addrlist.UpAddrs()
		if err != nil {
			in.log.Debug("listing this host's addresses", zap.Error(err))
		}
		list := addrlist.Choose(addrlist.IPOf(local), port, ifaces)
		s, err := addrlist.Encode(list)
		if err != nil { // Choose keeps within the bounds; this cannot happen
			in.log.Warn("publishing addresses", zap.Strings("addrs", list), zap.Error(err))
			return list[0]
		}
		s = in.publishedWith(s)
		in.log.Debug("publishing addresses", zap.String("addrs", s), zap.Stringer("registry_local", local))
		return s
	})
}

// embeddedHost is where an embedded registry listens: the pinned host, or loopback when
// none is (the registry of a pool of one process, which nobody else needs to reach).
func embeddedHost(host string) string {
	if host == "" || addrlist.IsWildcard(net.JoinHostPort(host, "0")) {
		return "127.0.0.1"
	}
	return host
}
