package core

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/ibisgo/ibis/internal/hub"
	"github.com/ibisgo/ibis/ipl"
)

// A member reaches a peer by one of three routes (docs/GRIDS.md): a direct dial of an
// address the peer published; a reverse set-up, where the peer dials this member at its
// request (the peer is behind a firewall or NAT, this member is not); or a relay, where
// both open a connection to a hub (cmd/ibis-hub) that joins them. Whatever the route,
// the connection is a TCP socket on which the two members run the same end-to-end
// handshake (TLS, the pool check), so a hub sees only what TLS lets it see.

// routeKind says how a connection was set up.
type routeKind uint8

const (
	routeDirect routeKind = iota
	routeReverse
	routeRelay
)

func (k routeKind) String() string {
	switch k {
	case routeReverse:
		return "reverse"
	case routeRelay:
		return "relay"
	default:
		return "direct"
	}
}

// routeKindOf tells the kind of a route from its String ("" is a direct one).
func routeKindOf(s string) routeKind {
	switch {
	case s == route{kind: routeReverse}.String():
		return routeReverse
	case strings.HasPrefix(s, route{kind: routeRelay}.String()):
		return routeRelay
	}
	return routeDirect
}

// routeNote starts the note "(route: R)" that ends the loss of a connection set up by a
// route other than a direct dial.
const routeNote = "route: "

// route is one way of reaching a peer that dialPeer tries.
type route struct {
	kind routeKind
	addr string // direct: the address; relay: the hub
	key  string // relay: the peer's key at its hubs
	peer ipl.IbisIdentifier
	// connectCap, when set, bounds a direct route's TCP connect (dialorder.go).
	connectCap time.Duration
}

// String names the route in errors, logs and the reach cache.
func (r route) String() string {
	switch r.kind {
	case routeReverse:
		return "reverse set-up"
	case routeRelay:
		return "relay via hub " + r.addr
	default:
		return r.addr
	}
}

// Published route information follows a member's address list after ';' fields:
// "hubs=H1|H2" (the hubs it keeps a connection to), "key=K" (its key at those hubs) and
// "closed" (its hubs could not dial it back: it is behind a firewall or NAT). A member
// without hubs publishes its address list alone, as before.
const (
	routeSep     = ";"
	fieldHubs    = "hubs="
	fieldKey     = "key="
	fieldClosed  = "closed"
	maxHubs      = hub.MaxHubs
	routeKeySize = 16 // bytes of a member's key, published in hex
)

// routeInfo is what a member published about reaching it.
type routeInfo struct {
	addrs  string   // the address list (addrlist) or a transport's own address
	hubs   []string // the hubs it is registered at, in its order
	key    string
	closed bool
}

// parseRoutes splits a published address into the address list and the route fields.
// Fields it does not know are skipped, so that a later version can add some.
func parseRoutes(published string) routeInfo {
	addrs, rest, _ := strings.Cut(published, routeSep)
	info := routeInfo{addrs: addrs}
	for rest != "" {
		var f string
		f, rest, _ = strings.Cut(rest, routeSep)
		switch {
		case f == fieldClosed:
			info.closed = true
		case strings.HasPrefix(f, fieldKey):
			if k := f[len(fieldKey):]; validKey(k) {
				info.key = k
			}
		case strings.HasPrefix(f, fieldHubs):
			for h := range strings.SplitSeq(f[len(fieldHubs):], "|") {
				if _, _, err := net.SplitHostPort(h); err == nil && len(info.hubs) < maxHubs {
					info.hubs = append(info.hubs, h)
				}
			}
		}
	}
	if info.key == "" {
		info.hubs = nil // a hub finds a member by its key
	}
	return info
}

// suffix is the route fields to publish after the address list ("" without hubs).
func (r routeInfo) suffix() string {
	if len(r.hubs) == 0 || r.key == "" {
		return ""
	}
	s := routeSep + fieldHubs + strings.Join(r.hubs, "|") + routeSep + fieldKey + r.key
	if r.closed {
		s += routeSep + fieldClosed
	}
	return s
}

func validKey(k string) bool {
	if len(k) != 2*routeKeySize {
		return false
	}
	for _, c := range k {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// checkHubs validates the configured hub addresses (hub.ParseHubs), which must also
// keep clear of the separators of the published route fields.
func checkHubs(hubs []string) error {
	if len(hubs) == 0 {
		return nil
	}
	if len(hubs) > maxHubs {
		return fmt.Errorf("%d hubs; at most %d", len(hubs), maxHubs)
	}
	for _, h := range hubs {
		if strings.ContainsAny(h, routeSep+"|,") {
			return fmt.Errorf("hub %q: want host:port", h)
		}
	}
	_, err := hub.ParseHubs(strings.Join(hubs, ","))
	return err
}

// routeCtxKey carries the route of one dial from dialPeer, through the transport's
// Dial, to Connect.
type routeCtxKey struct{}

func withRoute(ctx context.Context, r route) context.Context {
	return context.WithValue(ctx, routeCtxKey{}, r)
}

// Connect opens the socket of an outgoing connection (Acceptor): a plain dial of addr,
// or the reverse set-up or relay that dialPeer chose for this attempt. The transport
// then runs the handshake on it as on any socket it dialled.
func (in *Instance) Connect(ctx context.Context, addr string) (net.Conn, error) {
	r, _ := ctx.Value(routeCtxKey{}).(route)
	switch r.kind {
	case routeReverse:
		return in.dialReverse(ctx, r)
	case routeRelay:
		return in.dialRelay(ctx, r)
	}
	d := net.Dialer{Timeout: r.connectCap}
	return d.DialContext(ctx, "tcp", addr)
}
