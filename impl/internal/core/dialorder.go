package core

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/addrlist"
	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/ipl"
)

// attemptFloor is the least time one address of several gets before the next is tried:
// enough for a connection and handshake across a slow network, short enough that an
// address that swallows packets costs only a share of a Connect.
const attemptFloor = 2 * time.Second

// maxReach bounds the addresses remembered; beyond it the memory starts afresh.
const maxReach = 4096

// reachCache remembers, per peer, the route that last answered (one of its published
// addresses, a reverse set-up or a relay via a hub: route.String), so that the next
// connection tries it first.
type reachCache struct {
	mu sync.Mutex
	m  map[string]string
}

func (r *reachCache) get(peer string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[peer]
}

func (r *reachCache) put(peer, addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil || len(r.m) >= maxReach {
		r.m = map[string]string{}
	}
	r.m[peer] = addr
}

// dialPeer dials a peer by the routes it published (route.go): its addresses
// (addrlist) in order, then, when those could not be reached, a reverse set-up and a
// relay through each of its hubs; the route that answered last time goes first. Only a
// failure to connect (refused, unreachable, no answer within the attempt's share of the
// time, a route that gave no socket: a reverse set-up nobody answered, a hub that refused
// this member or could not reach the peer), something that is no Ibis-Go peer answering
// (poolauth.ErrStranger) or another Ibis answering moves on to the next route; anything
// else (the peer's pool check refusing this member, ctx ending, the instance closing) is
// returned at once. When every route failed the error is a *DialError naming each. The
// route returned is the one that answered (or was tried last).
func (in *Instance) dialPeer(ctx context.Context, to ipl.IbisIdentifier, req *Request, lost func(error)) (OutConn, *Reply, route, error) {
	info := parseRoutes(to.Address)
	addrs, err := addrlist.Parse(info.addrs)
	if err != nil {
		addrs = []string{info.addrs} // not a list (mp's "mpi:N", say): the transport's to judge
	}
	peer := to.String()
	routes := make([]route, 0, len(addrs)+1+len(info.hubs))
	for _, a := range addrs {
		routes = append(routes, route{kind: routeDirect, addr: a})
	}
	direct := len(routes)
	if _, ok := in.tr.(Injector); ok && in.reg != nil {
		if !in.hubs.closed() {
			routes = append(routes, route{kind: routeReverse, peer: to})
		}
		for _, h := range info.hubs {
			routes = append(routes, route{kind: routeRelay, addr: h, key: info.key, peer: to})
		}
	}
	best := in.reach.get(peer)
	for i, r := range routes[1:] {
		if r.String() == best {
			routes = append([]route{r}, append(routes[:i+1:i+1], routes[i+2:]...)...)
			break
		}
	}
	de := &DialError{Peer: to, hubs: len(info.hubs) > 0}
	var other *Reply // another Ibis's answer, for a peer with one address
	// Routes other than a direct dial are tried only where a direct one could not be
	// made for want of a way there: a peer that published hubs or said it is closed,
	// or no address that answered at all (a refusal means the peer's host is there).
	// A route other than a direct dial that answered last time is evidence enough.
	others := info.closed || len(info.hubs) > 0 || routeKindOf(best) != routeDirect
	for i, r := range routes {
		if r.kind != routeDirect && !others {
			break
		}
		// The time is shared among the routes that will be tried: while no other route
		// is called for, the direct ones alone (the last gets all that is left, its
		// handshake included, as on a cluster).
		left := len(routes) - i
		if !others {
			left = 0
			for _, rest := range routes[i:] {
				if rest.kind == routeDirect {
					left++
				}
			}
		}
		actx, cancel, share := attemptContext(ctx, left)
		if r.kind == routeDirect && (info.closed || routes[len(routes)-1].kind != routeDirect) {
			r.connectCap = connectCap(info.closed)
		}
		if r.kind == routeReverse && i < len(routes)-1 && share > reverseCap {
			cancel()
			actx, cancel = context.WithTimeout(ctx, reverseCap)
			share = reverseCap
		}
		l := lost
		if r.kind != routeDirect {
			l = func(err error) { lost(fmt.Errorf("%w ("+routeNote+"%s)", err, r)) }
		}
		c, rep, err := in.tr.Dial(withRoute(actx, r), r.addr, req, l)
		timedOut := err != nil && actx.Err() != nil && ctx.Err() == nil
		cancel()
		switch {
		case err == nil && rep.Code != ReplyAccepted && otherIbis(rep):
			other = rep
			de.Tried = append(de.Tried, DialAttempt{Addr: r.String(), Err: fmt.Errorf("another Ibis answered: %s", rep.Detail)})
		case err == nil:
			if len(routes) > 1 {
				in.reach.put(peer, r.String())
			}
			if r.kind != routeDirect {
				in.log.Debug("connected by another route than a direct dial", zap.Stringer("peer", to), zap.String("route", r.String()))
			}
			return c, rep, r, nil
		case ctx.Err() != nil:
			if len(de.Tried) == 0 {
				return nil, nil, r, err
			}
			de.Tried = append(de.Tried, DialAttempt{Addr: r.String(), Err: err})
			return nil, nil, r, de
		case timedOut:
			de.Tried = append(de.Tried, DialAttempt{Addr: r.String(), Err: fmt.Errorf("no answer within %v", share.Round(time.Millisecond))})
			others = others || r.kind == routeDirect
		case connectFailed(err) || errors.Is(err, errRouteFailed):
			de.Tried = append(de.Tried, DialAttempt{Addr: r.String(), Err: err})
			others = others || r.kind == routeDirect && !errors.Is(err, syscall.ECONNREFUSED)
		case errors.Is(err, poolauth.ErrStranger):
			// Something else listens there (an address reused by another host's service):
			// the peer may well be at its next address, or by another route.
			de.Tried = append(de.Tried, DialAttempt{Addr: r.String(), Err: err})
			others = true
		default:
			return nil, nil, r, err
		}
	}
	if direct == 1 && len(de.Tried) == 1 && other != nil {
		return nil, other, route{}, nil // as ever: "not yet" to Connect, which reports the answer
	}
	return nil, nil, route{}, de
}

// connectCap bounds the TCP connect of a direct attempt (not its handshake) when other
// routes remain: a connection within a site or across a wide-area link is made well
// within 3 s, and a firewall that drops the attempt costs no more. A peer that said it
// is closed is reached directly only from its own site (or a site its firewall lets in),
// where a connect takes a round trip: it gets 250 ms, wherever its addresses come in
// the order, so that each first connection into a closed site does not wait long for
// the route that works. A connect that loses its SYN there takes another route.
func connectCap(closed bool) time.Duration {
	if closed {
		return 250 * time.Millisecond
	}
	return 3 * time.Second
}

// reverseCap bounds a reverse set-up when other routes remain: a peer that can dial
// back does so within a registry round trip and a connect, and one behind a firewall
// that also shields this member never does.
const reverseCap = 10 * time.Second

// attemptContext bounds one attempt when left routes remain to try: an equal share
// of the time left, at least attemptFloor; the last route gets all that is left.
func attemptContext(ctx context.Context, left int) (context.Context, context.CancelFunc, time.Duration) {
	dl, ok := ctx.Deadline()
	if left <= 1 || !ok {
		c, cancel := context.WithCancel(ctx)
		return c, cancel, time.Until(dl)
	}
	share := max(time.Until(dl)/time.Duration(left), attemptFloor)
	c, cancel := context.WithTimeout(ctx, share)
	return c, cancel, share
}

// otherIbis tells a reply from another Ibis than the one dialled (Accept's answer when
// the request's Target is not itself: an address that reaches a different process).
func otherIbis(rep *Reply) bool {
	return rep.Code == ReplyNoSuchPort && strings.HasPrefix(rep.Detail, otherIbisPrefix)
}

// otherIbisPrefix begins Accept's answer to a request meant for another Ibis.
const otherIbisPrefix = "this is "

// connectFailed tells a failure to make the connection at all (refused, unreachable, no
// route) from a failure after it was made.
func connectFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// DialAttempt is one address tried and what it gave.
type DialAttempt struct {
	Addr string
	Err  error
}

// DialError is a failure to reach a peer by any route it published. It matches
// ipl.ErrRefused and each attempt's error with errors.Is, and its text names every
// route with what it gave, with a hint where the peer published an address this host
// cannot use.
type DialError struct {
	Peer  ipl.IbisIdentifier
	Tried []DialAttempt
	hubs  bool // the peer published hubs
}

func (e *DialError) Error() string {
	var b strings.Builder
	if len(e.Tried) == 1 {
		b.WriteString(attemptText(e.Tried[0]))
	} else {
		fmt.Fprintf(&b, "%v: no route to %s/%s answered (%d tried): ", ipl.ErrRefused, e.Peer.Pool, e.Peer.ID, len(e.Tried))
		for i, t := range e.Tried {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(attemptText(t))
		}
	}
	if h := e.hint(); h != "" {
		b.WriteString(" (hint: ")
		b.WriteString(h)
		b.WriteString(")")
	}
	return b.String()
}

func attemptText(t DialAttempt) string {
	msg := t.Err.Error()
	if !strings.Contains(msg, t.Addr) {
		msg = t.Addr + ": " + msg
	}
	return msg
}

// hint says what to do when the peer published a loopback address (which reaches only
// its own host) or one this host has no route to.
func (e *DialError) hint() string {
	var loop, unroutable []string
	for _, t := range e.Tried {
		if host, _, err := net.SplitHostPort(t.Addr); err == nil && addrlist.IsLoopback(host) {
			loop = append(loop, t.Addr)
		} else if errors.Is(t.Err, syscall.ENETUNREACH) || errors.Is(t.Err, syscall.EHOSTUNREACH) {
			unroutable = append(unroutable, t.Addr)
		}
	}
	switch {
	case e.hubs && len(loop) == 0:
		return fmt.Sprintf("no hub %s/%s published could relay: check that its ibis-hub runs and that both members reach it", e.Peer.Pool, e.Peer.ID)
	case len(loop) > 0:
		what := "the loopback address"
		if len(loop) > 1 {
			what = "the loopback addresses"
		}
		return fmt.Sprintf("%s/%s published %s %s, which reaches only the host it runs on; "+
			"if it runs on another host, start it without IBIS_HOST, or with IBIS_HOST set to an address this host can reach",
			e.Peer.Pool, e.Peer.ID, what, strings.Join(loop, ", "))
	case len(unroutable) > 0:
		return fmt.Sprintf("%s is not routable from this host; start %s/%s with IBIS_HOST set to an address this host can reach",
			strings.Join(unroutable, ", "), e.Peer.Pool, e.Peer.ID)
	case !e.hubs && len(e.Tried) > 1 && e.Tried[len(e.Tried)-1].Addr == (route{kind: routeReverse}).String():
		return fmt.Sprintf("neither side could dial the other: if %s/%s or this member is behind a firewall or NAT, "+
			"run an ibis-hub both can reach and give every member IBIS_HUB (docs/GRIDS.md)", e.Peer.Pool, e.Peer.ID)
	}
	return ""
}

// Unwrap gives ipl.ErrRefused and every attempt's error, for errors.Is.
func (e *DialError) Unwrap() []error {
	errs := []error{ipl.ErrRefused}
	for _, t := range e.Tried {
		errs = append(errs, t.Err)
	}
	return errs
}
