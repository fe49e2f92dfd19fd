package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/addrlist"
	"github.com/ibisgo/ibis/internal/hub"
)

// A member with hubs (ipl.WithHubs, IBIS_HUB) keeps a control connection to each. At
// the first registration a hub dials the member's addresses back: a member no hub could
// reach publishes "closed", and peers then spend little time dialling it directly. The
// member publishes its hubs and the key it registered under; a peer that can dial
// neither way asks one of those hubs to relay (dialRelay), and the hub asks this member
// over its control connection to open a socket to it, which this member then serves as
// an incoming connection.

const (
	// hubRegisterWait bounds the first registration at the hubs, during Open.
	hubRegisterWait = 5 * time.Second
	// hubRetryMax bounds the wait between registrations at a hub that went away.
	hubRetryMax = 10 * time.Second
)

// probeMagic begins a hub's probe of this member's addresses (hub.AnswerProbe).
var probeMagic = [4]byte([]byte(hub.ProbeMagic))

// errProbeAnswered is Authenticate's answer to a hub's probe: the transport closes the
// socket, and nothing is logged.
var errProbeAnswered = errors.New("core: answered a hub's probe")

// hubLinks are the member's hubs and what it publishes about them; the zero value is a
// member without hubs.
type hubLinks struct {
	hubs   []string
	key    string
	shut   bool // the hubs could not dial this member back
	suffix string
}

// closed reports whether this member's hubs found it closed to dialling.
func (h *hubLinks) closed() bool { return h.shut }

// startHubs registers at every hub (in parallel, waiting at most hubRegisterWait for
// their answers) and keeps a connection to each for the life of the instance; it sets
// the route fields to publish after the address list. Open calls it before joining.
func (in *Instance) startHubs(ctx context.Context, addrs []string) {
	h := &in.hubs
	var key [routeKeySize]byte
	if _, err := rand.Read(key[:]); err != nil {
		in.log.Warn("a hub key: hubs unused", zap.Error(err))
		return
	}
	h.hubs, h.key = in.cfg.Hubs, hex.EncodeToString(key[:])
	reg := hub.Registration{Pool: in.cfg.Pool, Secret: in.secret, Key: h.key, Advertise: addrs}
	first := make(chan *hub.Member, len(h.hubs)) // each hub's first registration (nil: failed)
	// Open replaces in.log once joined, while these goroutines run: they keep this one.
	log := in.log
	for _, a := range h.hubs {
		in.Go(func() { in.keepHub(a, reg, first, log) })
	}
	ctx, cancel := context.WithTimeout(ctx, hubRegisterWait)
	defer cancel()
	answered, reachable := 0, false
wait:
	for range h.hubs {
		select {
		case m := <-first:
			if m != nil {
				answered++
				reachable = reachable || m.Reachable()
			}
		case <-ctx.Done():
			break wait
		}
	}
	h.shut = answered > 0 && !reachable
	h.suffix = routeInfo{hubs: h.hubs, key: h.key, closed: h.shut}.suffix()
	in.log.Info("registered at hubs", zap.Strings("hubs", h.hubs), zap.Int("answered", answered), zap.Bool("closed", h.shut))
}

// keepHub keeps this member registered at the hub at addr until the instance ends,
// serving the connections the hub relays; first gets the first registration (nil when
// it failed). It logs to log, not in.log, which Open replaces meanwhile.
//
// A hub that cannot be registered at before it ever was (a wrong address, a name that
// does not resolve, a hub that is down, or something else listening there) is worth a
// warning, once: the member publishes the hub anyway, and peers that need it to relay
// cannot connect until the registration succeeds. The retries that follow, and the
// failures after a hub that was registered at went away (it is being restarted, say),
// are logged at Info.
func (in *Instance) keepHub(addr string, reg hub.Registration, first chan<- *hub.Member, log *zap.Logger) {
	ctx, cancel := in.bind(context.Background())
	defer cancel()
	inj, _ := in.tr.(Injector)
	backoff := 100 * time.Millisecond
	registered, warned := false, false
	for ctx.Err() == nil {
		rctx, rcancel := context.WithTimeout(ctx, hubRegisterWait)
		m, err := hub.Register(rctx, addr, reg, hub.WithClientLogger(log))
		rcancel()
		if first != nil {
			first <- m // buffered for every hub
			first = nil
		}
		switch {
		case err != nil && ctx.Err() != nil:
			// The instance is closing: nothing to report.
		case err != nil && !registered && !warned:
			warned = true
			log.Warn("cannot register at a hub; connections relayed through it will not work until it registers (retrying)",
				zap.String("hub", addr), zap.Error(err))
		case err != nil:
			log.Info("registering at a hub", zap.String("hub", addr), zap.Error(err))
		default:
			backoff = 100 * time.Millisecond
			if warned && !registered {
				log.Info("registered at a hub after all", zap.String("hub", addr), zap.Bool("reachable", m.Reachable()))
			}
			registered = true
			log.Debug("registered at a hub", zap.String("hub", addr), zap.Bool("reachable", m.Reachable()), zap.String("observed", m.Observed()))
			serveHub(ctx, addr, m, inj, log)
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		backoff = min(2*backoff, hubRetryMax)
	}
}

// serveHub serves the sockets the hub relays to this member until the hub goes away
// or the instance ends.
func serveHub(ctx context.Context, addr string, m *hub.Member, inj Injector, log *zap.Logger) {
	defer m.Close()
	for {
		select {
		case c, ok := <-m.Accepted():
			if !ok { // closed as the member ends: Done follows
				<-m.Done()
				log.Info("lost the connection to a hub; registering again", zap.String("hub", addr), zap.Error(m.Err()))
				return
			}
			if inj == nil || !inj.Inject(c, route{kind: routeRelay, addr: addr}.String()) {
				_ = c.Close()
			}
		case <-m.Done():
			log.Info("lost the connection to a hub; registering again", zap.String("hub", addr), zap.Error(m.Err()))
			return
		case <-ctx.Done():
			return
		}
	}
}

// dialRelay asks the hub r.addr to relay a connection to the peer registered there
// under r.key. When that hub cannot be reached, it asks this member's own hubs to
// forward the request to it.
func (in *Instance) dialRelay(ctx context.Context, r route) (net.Conn, error) {
	req := hub.RelayRequest{Pool: in.cfg.Pool, Secret: in.secret, Key: r.key}
	c, err := hub.Relay(ctx, r.addr, req)
	if err == nil {
		return c, nil
	}
	errs := []error{err}
	if errors.Is(err, hub.ErrUnreachable) {
		req.TargetHub = r.addr
		for _, via := range in.hubs.hubs {
			if via == r.addr || ctx.Err() != nil {
				continue
			}
			c, err := hub.Relay(ctx, via, req)
			if err == nil {
				return c, nil
			}
			errs = append(errs, fmt.Errorf("through hub %s: %w", via, err))
		}
	}
	return nil, fmt.Errorf("%w: %w", errRouteFailed, errors.Join(errs...))
}

// publishedWith appends the hubs' route fields to the address list s.
func (in *Instance) publishedWith(s string) string { return s + in.hubs.suffix }

// advertised is what a member tells its hubs to dial back: the address it listens on,
// or, listening on every interface, each of this host's addresses (addrlist).
func (in *Instance) advertised(listening string) []string {
	if !addrlist.IsWildcard(listening) {
		return []string{listening}
	}
	_, p, _ := net.SplitHostPort(listening)
	port, _ := strconv.Atoi(p)
	ifaces, err := addrlist.UpAddrs()
	if err != nil {
		in.log.Debug("listing this host's addresses", zap.Error(err))
	}
	return addrlist.Choose(nil, port, ifaces)
}
