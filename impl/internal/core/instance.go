package core

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/hub"
	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
	"github.com/ibisgo/ibis/serialization"
)

// Instance is the shared part of every implementation's ipl.Ibis.
type Instance struct {
	cfg  *ipl.Config
	impl string
	log  *zap.Logger
	// acceptLog is the accept path's logger, fixed before the transport starts:
	// connections may come in while Open names the instance in log after joining.
	acceptLog *zap.Logger
	tr        Transport
	caps      Capabilities // what tr declares it can do
	// secret is the pool's (none: an open pool), for the pool check of every connection.
	secret poolauth.Secret
	// tlsServer and tlsClient, when the pool uses TLS, open every connection.
	tlsServer, tlsClient *tls.Config

	reg      *registry.Client
	embedded *registry.Server
	id       ipl.IbisIdentifier
	events   *eventQueue
	notes    *notifier
	stalls   *watchdog    // cuts stalled incoming connections (stall.go)
	reach    reachCache   // the route to each peer that answered last (dialorder.go)
	reverse  reverseWaits // reverse set-ups under way (reverse.go)
	hubs     hubLinks     // the relay hubs this member keeps a connection to (hubs.go)
	refusals *refusalLog  // logs refused connections at a bounded rate (refusals.go)
	gs       *goroutines

	// mu guards what follows, and reg and id as Open sets them. It is a leaf: ports
	// are closed, the registry called and the watchdog told after it is released.
	mu        sync.Mutex
	sendPorts map[string]*SendPort
	recvPorts map[string]*ReceivePort
	nextSend  int
	dead      map[string]error // why each member the registry reported dead is gone, by ID

	done     chan struct{}
	closed   atomic.Bool
	closing  atomic.Bool   // the first Close has begun
	workDone chan struct{} // closed when that Close has done its work (all but the waits)
	workErr  error         // what that work ran into; written before workDone is closed

	// servesPool: embedded is the pool's registry for other processes too
	// (cfg.ServeRegistry), so Close waits for them to leave before closing it.
	servesPool bool
}

var _ ipl.Ibis = (*Instance)(nil)

// Open starts an instance over tr: it starts accepting, joins the pool (running an
// embedded registry server when cfg.Registry is empty or cfg.ServeRegistry is set) and
// returns the running instance. impl is the implementation's registered name.
func Open(ctx context.Context, cfg *ipl.Config, impl string, tr Transport) (*Instance, error) {
	in := &Instance{
		cfg:       cfg,
		impl:      impl,
		log:       cfg.Logger.With(zap.String("impl", impl)),
		tr:        tr,
		caps:      tr.Capabilities(),
		sendPorts: map[string]*SendPort{},
		recvPorts: map[string]*ReceivePort{},
		gs:        newGoroutines(),
		done:      make(chan struct{}),
		workDone:  make(chan struct{}),
	}
	if in.log == nil {
		in.log = zap.NewNop()
	}
	in.acceptLog = in.log
	in.stalls = newWatchdog(in)
	in.refusals = newRefusalLog()
	secret, err := poolauth.Load(string(cfg.PoolSecret), cfg.PoolSecretFile)
	if err != nil {
		return nil, fmt.Errorf("%w: the pool secret: %w", ipl.ErrInvalidArgument, err)
	}
	in.secret = secret
	if err := checkHubs(cfg.Hubs); err != nil {
		return nil, fmt.Errorf("%w: %w", ipl.ErrInvalidArgument, err)
	}
	if err := checkPoolRegistry(cfg); err != nil {
		return nil, err
	}
	if files := (tlsconf.Files{Cert: cfg.TLSCert, Key: cfg.TLSKey, CA: cfg.TLSCA}); files.IsSet() {
		if !in.caps.TLS {
			return nil, fmt.Errorf("%w: implementation %s cannot speak TLS on its data connections", ipl.ErrUnsupported, impl)
		}
		if in.tlsServer, err = files.Server(); err == nil {
			in.tlsClient, err = files.Client()
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ipl.ErrInvalidArgument, err)
		}
	}
	addr, err := tr.Start(in)
	if err != nil {
		return nil, fmt.Errorf("starting transport: %w", err)
	}
	regAddr, err := in.startRegistry(cfg)
	if err != nil {
		_ = tr.Close()
		return nil, fmt.Errorf("starting embedded registry: %w", err)
	}
	in.events = newEventQueue(in, cfg.EventHandler)
	in.notes = newNotifier(in)
	if _, ok := tr.(Injector); len(cfg.Hubs) > 0 && !ok {
		in.log.Warn("this implementation makes no connections through hubs; IBIS_HUB is ignored", zap.Strings("hubs", cfg.Hubs))
	} else if len(cfg.Hubs) > 0 {
		in.startHubs(ctx, in.advertised(addr))
	}
	ropts := []registry.Option{
		in.publish(addr),
		registry.WithTag(cfg.Tag),
		registry.WithLogger(in.log), // the client names its logger itself
		registry.WithEventHandler(in.onEvent),
	}
	if cfg.PoolSize > 0 {
		ropts = append(ropts, registry.WithPoolSize(cfg.PoolSize))
	}
	if in.secret.IsSet() {
		ropts = append(ropts, registry.WithPoolSecret(in.secret.Bytes()))
	}
	if in.tlsClient != nil {
		ropts = append(ropts, registry.WithTLS(in.tlsClient))
	}
	ropts = append(ropts, dialOptions(cfg)...)
	client, err := registry.Join(ctx, regAddr, cfg.Pool, ropts...)
	if err != nil {
		in.events.close()
		in.notes.close()
		close(in.done)
		_ = tr.Close()
		if in.embedded != nil {
			_ = in.embedded.Close()
		}
		// No program code has run: the goroutines end at once.
		wctx, cancel := context.WithTimeout(context.Background(), closeWait)
		werr := in.gs.wait(wctx, true, "abandoning the instance")
		cancel()
		if werr != nil {
			err = errors.Join(err, werr)
		}
		return nil, fmt.Errorf("joining pool %q at %s: %w", cfg.Pool, regAddr, registryError(ctx, err))
	}
	in.mu.Lock() // incoming handshakes may already be reading the identity
	in.reg = client
	in.id = client.Identity()
	in.mu.Unlock()
	in.log = in.log.With(zap.String("ibis", in.id.String()))
	in.log.Debug("joined pool")
	return in, nil
}

// Authenticate opens an incoming connection (Acceptor): TLS first when the pool uses it,
// then the pool check. A peer must prove it knows the pool's secret, when the pool has
// one; from another pool it may come only when this pool has none (Accept then denies
// it, as it always has). Refusals are logged with the peer's address.
func (in *Instance) Authenticate(conn net.Conn) (net.Conn, error) {
	var first [4]byte
	if _, err := io.ReadFull(conn, first[:]); err != nil {
		err = fmt.Errorf("%w: reading the first bytes: %w", ipl.ErrUnauthenticated, err)
		in.refusals.refused(in.acceptLog, "refused a connection: pool check failed", conn.RemoteAddr(), err)
		return nil, err
	}
	switch first {
	case reverseMagic:
		err := in.takeReverse(conn)
		switch {
		case errors.Is(err, ErrTaken):
		case errors.Is(err, errReverseLate):
			in.acceptLog.Debug("closed a late reverse connection", zap.Stringer("remote", conn.RemoteAddr()), zap.Error(err))
		default:
			in.refusals.refused(in.acceptLog, "refused a connection: reverse set-up", conn.RemoteAddr(), err)
		}
		return nil, err
	case probeMagic:
		if err := hub.AnswerProbe(conn); err != nil {
			return nil, fmt.Errorf("answering a hub's probe: %w", err)
		}
		return nil, errProbeAnswered
	}
	pc := &prefixConn{Conn: conn, pre: first[:]}
	var opened net.Conn = pc
	if in.tlsServer != nil {
		if err := refusePlain(pc, first[:]); err != nil {
			in.refusals.refused(in.acceptLog, "refused a connection: TLS handshake failed", conn.RemoteAddr(), err)
			return nil, err
		}
		tc := newTLSConn(pc, in.tlsServer, true)
		if err := tc.Handshake(); err != nil {
			in.refusals.refused(in.acceptLog, "refused a connection: TLS handshake failed", conn.RemoteAddr(), err)
			return nil, fmt.Errorf("%w: TLS: %w", ipl.ErrUnauthenticated, err)
		}
		opened = tc
	}
	_, err := poolauth.Accept(opened, func(pool string) (poolauth.Secret, bool) {
		return in.secret, !in.secret.IsSet() || pool == in.cfg.Pool
	})
	if err != nil {
		in.refusals.refused(in.acceptLog, "refused a connection: pool check failed", conn.RemoteAddr(), err)
		return nil, err
	}
	if opened == pc && len(pc.pre) == 0 {
		opened = conn // the socket itself, for transports that hand it on by its descriptor
	}
	return opened, nil
}

// Introduce opens an outgoing connection (Acceptor): TLS when the pool uses it, then the
// dialling side of the pool check.
func (in *Instance) Introduce(conn net.Conn) (net.Conn, error) {
	if in.tlsClient != nil {
		tc := newTLSConn(conn, in.tlsClient, false)
		if err := tc.Handshake(); err != nil {
			var rh tls.RecordHeaderError
			switch {
			case errors.As(err, &rh) && poolauth.PlainHello(rh.RecordHeader[:]):
				err = fmt.Errorf("the peer does not speak TLS (it began the pool check in plain): configure TLS on every member or on none: %w", err)
			case errors.As(err, &rh) && rh.Conn != nil, // its first record is not TLS
				errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
				// Neither TLS nor a plain member: something else listens there (or a
				// member closed during the handshake), and the peer may be at its next
				// address (dialPeer).
				return nil, fmt.Errorf("%w: TLS with %s: %w", poolauth.ErrStranger, conn.RemoteAddr(), err)
			}
			return nil, fmt.Errorf("%w: TLS with %s: %w", ipl.ErrUnauthenticated, conn.RemoteAddr(), err)
		}
		conn = tc
	}
	if err := poolauth.Dial(conn, in.cfg.Pool, in.secret); err != nil {
		return nil, err
	}
	return conn, nil
}

// Identifier names this instance.
func (in *Instance) Identifier() ipl.IbisIdentifier { return in.id }

// Implementation returns the implementation's name.
func (in *Instance) Implementation() string { return in.impl }

// Registry gives access to pool-wide services.
func (in *Instance) Registry() ipl.Registry { return registryView{in} }

// Done is closed when the instance has ended.
func (in *Instance) Done() <-chan struct{} { return in.done }

// Go runs f on a goroutine that Close waits for; transports use it so that no goroutine
// outlives the instance. f must return once Done is closed, and must not call Close.
func (in *Instance) Go(f func()) { in.gs.spawn(runsInstance, "", func(*tracked) { f() }) }

func serializationKind(pt ipl.PortType) serialization.Kind {
	switch pt.Serialization() {
	case ipl.SerializationObject:
		return serialization.KindObject
	case ipl.SerializationData:
		return serialization.KindData
	default:
		return serialization.KindByte
	}
}

func (in *Instance) checkType(pt ipl.PortType) error {
	if pt.IsZero() {
		return fmt.Errorf("%w: the zero PortType; make one with ipl.NewPortType", ipl.ErrInvalidPortType)
	}
	if !in.cfg.HasPortType(pt) {
		return fmt.Errorf("%w: port type %s was not declared to ipl.New (use ipl.WithPortTypes)", ipl.ErrInvalidPortType, pt)
	}
	return nil
}

// CreateSendPort makes a send port.
func (in *Instance) CreateSendPort(pt ipl.PortType, name string, opts ...ipl.SendPortOption) (ipl.SendPort, error) {
	if err := in.checkType(pt); err != nil {
		return nil, err
	}
	if pc, ok := in.tr.(PortChecker); ok {
		if err := pc.CheckSendPort(pt); err != nil {
			return nil, fmt.Errorf("create send port: %w", err)
		}
	}
	if name != "" { // "" picks one
		if err := checkPortName("send port", name); err != nil {
			return nil, err
		}
	}
	pc := ipl.ApplySendPortOptions(opts)
	if pc.DisconnectHandler != nil && !pt.Has(ipl.ConnectionUpcalls) {
		return nil, fmt.Errorf("%w: a disconnect handler needs %s in the port type", ipl.ErrUnsupported, ipl.ConnectionUpcalls)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed.Load() {
		return nil, fmt.Errorf("create send port: %w", ipl.ErrClosed)
	}
	if name == "" {
		for {
			name = "sendport-" + strconv.Itoa(in.nextSend)
			in.nextSend++
			if _, ok := in.sendPorts[name]; !ok {
				break
			}
		}
	}
	if _, ok := in.sendPorts[name]; ok {
		return nil, fmt.Errorf("%w: send port %q", ipl.ErrPortExists, name)
	}
	sp := newSendPort(in, pt, name, pc)
	in.sendPorts[name] = sp
	return sp, nil
}

// checkPortName refuses a port name that is empty or longer than ipl.MaxPortName:
// senders connect to a receive port by name, and both names travel in a handshake of
// bounded size.
func checkPortName(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: a %s needs a name: senders connect to it by name", ipl.ErrInvalidArgument, what)
	case len(name) > ipl.MaxPortName:
		return fmt.Errorf("%w: a %s name of %d bytes: at most %d (ipl.MaxPortName)", ipl.ErrInvalidArgument, what, len(name), ipl.MaxPortName)
	}
	return nil
}

// CreateReceivePort makes a receive port.
func (in *Instance) CreateReceivePort(ctx context.Context, pt ipl.PortType, name string, opts ...ipl.ReceivePortOption) (ipl.ReceivePort, error) {
	if err := in.checkType(pt); err != nil {
		return nil, err
	}
	if err := checkPortName("receive port", name); err != nil {
		return nil, err
	}
	if pc, ok := in.tr.(PortChecker); ok {
		if err := pc.CheckReceivePort(pt); err != nil {
			return nil, fmt.Errorf("create receive port %q: %w", name, err)
		}
	}
	pc := ipl.ApplyReceivePortOptions(opts)
	if pc.MessageHandler != nil && !pt.HasAny(ipl.ReceiveAutoUpcalls, ipl.ReceivePollUpcalls) {
		return nil, fmt.Errorf("%w: a message handler needs %s or %s in the port type", ipl.ErrUnsupported, ipl.ReceiveAutoUpcalls, ipl.ReceivePollUpcalls)
	}
	if pc.MessageHandler == nil && !pt.Has(ipl.ReceiveExplicit) {
		return nil, fmt.Errorf("%w: port type has no %s, so it needs a message handler (ipl.WithMessageHandler)", ipl.ErrUnsupported, ipl.ReceiveExplicit)
	}
	if err := checkConcurrentUpcalls(pt, pc); err != nil {
		return nil, fmt.Errorf("create receive port %q: %w", name, err)
	}
	if pc.ConnectionHandler != nil && !pt.Has(ipl.ConnectionUpcalls) {
		return nil, fmt.Errorf("%w: a connection handler needs %s in the port type", ipl.ErrUnsupported, ipl.ConnectionUpcalls)
	}
	in.mu.Lock()
	if in.closed.Load() {
		in.mu.Unlock()
		return nil, fmt.Errorf("create receive port: %w", ipl.ErrClosed)
	}
	if _, ok := in.recvPorts[name]; ok {
		in.mu.Unlock()
		return nil, fmt.Errorf("%w: receive port %q", ipl.ErrPortExists, name)
	}
	rp := newReceivePort(in, pt, name, pc)
	in.recvPorts[name] = rp
	in.mu.Unlock()
	if pc.Global {
		if err := in.publishPort(ctx, rp); err != nil {
			return nil, err
		}
	}
	return rp, nil
}

func (in *Instance) removeSendPort(name string) {
	in.mu.Lock()
	delete(in.sendPorts, name)
	in.mu.Unlock()
}

// removeReceivePort forgets a closed port and, given a context, withdraws a Global
// port's name (withdrawPort).
func (in *Instance) removeReceivePort(ctx context.Context, rp *ReceivePort) {
	in.mu.Lock()
	if in.recvPorts[rp.name] == rp {
		delete(in.recvPorts, rp.name)
	}
	in.mu.Unlock()
	if ctx != nil && rp.cfg.Global {
		in.withdrawPort(ctx, rp)
	}
}

// Accept applies the connection rules to an incoming request.
func (in *Instance) Accept(req *Request, conn InConn) (*Reply, *Acceptance) {
	in.mu.Lock()
	id := in.id
	rp := in.recvPorts[req.To]
	in.mu.Unlock()
	if id.ID == "" {
		return &Reply{Code: ReplyNoSuchPort, Detail: "this instance is still joining its pool"}, nil
	}
	if req.Target != "" && req.Target != id.String() {
		return &Reply{Code: ReplyNoSuchPort, Detail: fmt.Sprintf(otherIbisPrefix+"%s, not %s", id, req.Target)}, nil
	}
	if rp == nil {
		return &Reply{Code: ReplyNoSuchPort, Detail: fmt.Sprintf("%s has no receive port %q", in.id, req.To)}, nil
	}
	if req.From.Ibis.Pool != id.Pool {
		// A stranger (another pool, or none): it may not reach a port of this pool.
		return &Reply{Code: ReplyDenied, Detail: fmt.Sprintf("%s is in pool %q, the sender %s is not", id, id.Pool, req.From)}, nil
	}
	if cause := in.deadCause(req.From.Ibis); cause != nil {
		return &Reply{Code: ReplyDenied, Detail: fmt.Sprintf("%s refuses %s: the registry declared its instance dead (%v); it must rejoin as a new member",
			id, req.From, cause)}, nil
	}
	if !in.isMember(req.From.Ibis) {
		// Not a member as far as this instance knows: a stranger posing as one, or a
		// newcomer whose join this instance has not heard of yet (its Connect retries
		// on this answer until the Joined event arrives here).
		return &Reply{Code: ReplyNoSuchPort, Detail: fmt.Sprintf("the sender's instance %s is not (yet) a member of pool %q here", req.From.Ibis, id.Pool)}, nil
	}
	return rp.accept(req, conn)
}

// isMember reports whether id is a current member of the pool, as the registry has
// told this instance.
func (in *Instance) isMember(id ipl.IbisIdentifier) bool {
	for _, m := range in.reg.Members() {
		if m.ID == id.ID {
			return true
		}
	}
	return false
}

func (in *Instance) onEvent(e registry.Event) {
	if e.Type == registry.Signal && strings.HasPrefix(e.Name, reverseSignal) {
		in.onReverseSignal(e) // core's own, never the program's
		return
	}
	if e.Type == registry.Died {
		in.peerGone(e.Member, e.Type)
	}
	in.events.push(e)
	if e.Type == registry.RegistryLost && strings.HasPrefix(e.Name, registry.LostDeclaredDead) {
		// The pool has buried this instance and cut its connections: it cannot go on.
		// Close runs once the program has had this event (for at most a second), on a
		// goroutine that Wait waits for and Close, like a callback's, does not.
		in.log.Error("the registry declared this instance dead; closing it", zap.String("why", e.Name))
		in.goCallback(runsSelfClose, "", func() {
			in.events.settle(time.Second)
			_ = in.Close()
		})
	}
}

// ports returns the current ports; with closing set it also marks the instance
// closed under the same lock, so that no port is created after the snapshot.
func (in *Instance) ports(closing bool) ([]*SendPort, []*ReceivePort) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if closing {
		in.closed.Store(true)
	}
	sps := make([]*SendPort, 0, len(in.sendPorts))
	for _, sp := range in.sendPorts {
		sps = append(sps, sp)
	}
	rps := make([]*ReceivePort, 0, len(in.recvPorts))
	for _, rp := range in.recvPorts {
		rps = append(rps, rp)
	}
	return sps, rps
}

// peerGone cuts every outgoing connection to an instance that died, so that no send
// waits on a peer that is not there. Incoming connections are cut by the stall
// watchdog as soon as their readers wait for more than the dead peer sent before it
// died (stall.go), so nothing it finished is thrown away, and a process that was only
// stopped cannot go on sending under its buried identity; Accept refuses it from now
// on. Each receive port's source hears of it too: a direct port's connection, which
// only Receive reads, is looked at now, so that an idle port notices the loss.
func (in *Instance) peerGone(id ipl.IbisIdentifier, how registry.EventType) {
	cause := fmt.Errorf("%w: %s %s", ipl.ErrConnectionLost, id, how)
	in.mu.Lock()
	if in.dead == nil {
		in.dead = map[string]error{}
	}
	if id.Pool == in.id.Pool {
		in.dead[id.ID] = cause
	}
	in.mu.Unlock()
	in.stalls.peerDied(id, cause)
	sps, rps := in.ports(false)
	for _, sp := range sps {
		sp.peerGone(id, cause)
	}
	for _, rp := range rps {
		rp.src.peerDied(id, cause)
	}
}

// deadCause returns why the member id is gone if the registry reported it dead, else nil.
func (in *Instance) deadCause(id ipl.IbisIdentifier) error {
	if id.Pool != in.id.Pool {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.dead[id.ID]
}

// endErr makes the error of a registry call that failed because the instance is
// closing match ipl.ErrClosed: the registry client reports its own end (it left the
// pool, the context the instance's end cancelled), and a handler blocked in such a call
// while Close runs must be able to tell that the Ibis ended, as it can for every other
// blocking call. closed is set as Close starts, before the client leaves the pool.
func (in *Instance) endErr(err error) error {
	if err == nil || errors.Is(err, ipl.ErrClosed) || !in.closed.Load() {
		return err
	}
	return fmt.Errorf("%w: %w", ipl.ErrClosed, err)
}

// closeWait bounds how long Close waits for the instance's goroutines that run no
// program callback (transport goroutines, pumps between callbacks); they end once
// the transport has closed. CloseContext sets the bound instead.
const closeWait = 10 * time.Second

// Close ends the instance (see ipl.Ibis.Close): send ports disconnect cleanly, receive
// ports close, the instance leaves the pool, and Close returns when every goroutine
// of the instance has ended except those inside a program callback at that moment.
// Those are not waited for, so a callback may call Close; their blocking calls on the
// instance return ErrClosed and they get no further callback. Wait waits for them too.
// Shutdown errors are joined into the result.
func (in *Instance) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	return in.CloseContext(ctx)
}

// CloseContext is Close with ctx, instead of closeWait, bounding its waits (programs
// reach it through an interface assertion). The first call does the work; later and
// concurrent ones wait for that work and return its errors too.
func (in *Instance) CloseContext(ctx context.Context) error {
	what := "close " + in.id.String()
	if in.closing.CompareAndSwap(false, true) {
		in.workErr = in.shutdown()
		close(in.workDone)
	} else {
		// The work never waits for a callback, so a callback may wait for it (at worst
		// for closeGrace, for a message that callback holds live).
		if err := in.awaitWork(ctx, what+": waiting for the first Close"); err != nil {
			return err
		}
	}
	return errors.Join(in.workErr, in.gs.wait(ctx, false, what))
}

// Wait waits until the instance has ended: a Close has done its work and every
// goroutine of the instance has ended, those running program callbacks included. A
// callback that is still running when ctx ends is named in an error matching
// ipl.ErrTimeout (or ctx's cause). Called from a callback it would wait for itself.
func (in *Instance) Wait(ctx context.Context) error {
	what := "wait for " + in.id.String() + " to end"
	if err := in.awaitWork(ctx, what+": it was not closed"); err != nil {
		return err
	}
	return in.gs.wait(ctx, true, what)
}

// awaitWork waits until the first Close has done its work, ctx permitting; work
// already done wins over an ended ctx.
func (in *Instance) awaitWork(ctx context.Context, what string) error {
	select {
	case <-in.workDone:
		return nil
	default:
	}
	select {
	case <-in.workDone:
		return nil
	case <-ctx.Done():
		return ctxError(ctx, what)
	}
}

// shutdown is the work of the first Close, everything but waiting for the instance's
// goroutines. Nothing in it waits for a program callback: the ports and the transport
// stop without them, and the pumps of the notifier and the event queue are only told
// to stop.
func (in *Instance) shutdown() error {
	sps, rps := in.ports(true)
	var errs []error
	for _, sp := range sps {
		if err := sp.Close(); err != nil && !errors.Is(err, ipl.ErrClosed) {
			errs = append(errs, err)
		}
	}
	for _, rp := range rps {
		if err := rp.Close(); err != nil && !errors.Is(err, ipl.ErrClosed) {
			errs = append(errs, err)
		}
	}
	if err := in.reg.Close(); err != nil {
		errs = append(errs, fmt.Errorf("leaving pool %q: %w", in.cfg.Pool, err))
	}
	// The pumps stop first: a handler that Done lets go gets no further callback.
	in.events.close()
	in.notes.close()
	close(in.done)
	if err := in.tr.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing the %s transport: %w", in.impl, err))
	}
	in.refusals.flush(in.log)
	if in.embedded != nil {
		in.drainRegistry()
		if err := in.embedded.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing the embedded registry: %w", err))
		}
	}
	return errors.Join(errs...)
}
