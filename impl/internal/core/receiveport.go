package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/serialization"
)

// ReceivePort is the shared implementation of ipl.ReceivePort.
//
// Whoever holds the port's token (an explicit Receive, a Poll or the upcall
// dispatcher) takes the next message from the port's one message source, fixed when
// the port is made (source.go). The token (token.go) makes sure at most one message
// lives, or one per concurrent upcall (concurrent.go).
//
// Locks: connection decisions are taken one at a time, in turn (accept). mu guards the
// connection lists and the upcall state; it is held for bookkeeping only, never across
// a wait for another goroutine or a call into the program.
type ReceivePort struct {
	stats portStats
	in    *Instance
	pt    ipl.PortType
	name  string
	cfg   ipl.ReceivePortConfig
	id    ipl.ReceivePortIdentifier
	kind  serialization.Kind
	log   *zap.Logger

	src    messageSource // where the token holder takes messages from (source.go)
	token  token         // see token.go; one slot per concurrent upcall (concurrent.go)
	slots  int           // the token's slots: how many messages may live at once
	gather token         // held by whoever takes all the slots (concurrent.go)
	closed chan struct{}
	once   sync.Once

	turn chan struct{} // held by the connection decision under way (accept)

	mu         sync.Mutex
	conns      []*inConn
	newConns   []ipl.SendPortIdentifier
	lostConns  []ipl.SendPortIdentifier
	enabled    bool
	upcallStop chan struct{}  // non-nil while message upcalls are enabled
	stash      []*readMessage // taken by dispatchers as upcalls were disabled

	downcalls bool // the type has connection.downcalls: keep the new/lost lists
	numbered  bool // the type has communication.numbered
	explicit  bool // the type has receive.explicit
	manyToOne bool // the type accepts several senders: whole messages first (readahead.go)
}

var _ ipl.ReceivePort = (*ReceivePort)(nil)

// inConn is one accepted connection of the port.
type inConn struct {
	port *ReceivePort
	from ipl.SendPortIdentifier
	c    InConn
	// note ends the errors of a connection that came by another route than a direct
	// dial: " (route: relay via hub H)"; "" for a direct one.
	note string
	rd   *serialization.Reader
	via  atomic.Pointer[Delivery] // how its messages reach the port (delivery.go)

	taken atomic.Uint64  // whole messages the port took from it (told in a cut notice)
	watch *stallWatch    // the connection's progress, for the stall watchdog
	guard *guardedReader // the stream ic.rd reads, when the delivery reads a stream
}

func newReceivePort(in *Instance, pt ipl.PortType, name string, cfg ipl.ReceivePortConfig) *ReceivePort {
	p := &ReceivePort{
		in:      in,
		pt:      pt,
		name:    name,
		cfg:     cfg,
		id:      ipl.ReceivePortIdentifier{Ibis: in.id, Name: name},
		kind:    serializationKind(pt),
		log:     in.log.With(zap.String("receiveport", name)),
		token:   make(token, upcallSlots(cfg)),
		slots:   upcallSlots(cfg),
		gather:  newToken(),
		closed:  make(chan struct{}),
		turn:    make(chan struct{}, 1),
		enabled: !cfg.ConnectionsDisabled,

		downcalls: pt.Has(ipl.ConnectionDowncalls),
		numbered:  pt.Has(ipl.CommunicationNumbered),
		explicit:  pt.Has(ipl.ReceiveExplicit),
		manyToOne: pt.ManyToOne(),
	}
	p.src = newSource(p, in.caps)
	return p
}

// Identifier names the port.
func (p *ReceivePort) Identifier() ipl.ReceivePortIdentifier { return p.id }

// Type returns the port's type.
func (p *ReceivePort) Type() ipl.PortType { return p.pt }

func (p *ReceivePort) isClosed() bool {
	select {
	case <-p.closed:
		return true
	default:
		return false
	}
}

// accept decides whether to take an incoming connection. Decisions are taken one at a
// time, in turn, so that the connection handler's answers come in order and each
// decision sees the ones before it (a one-to-one port takes one sender). The turn is
// not a lock: waiting for it ends when the port closes, Close never takes it, and the
// handler (which may close the port or the Ibis) runs on a goroutine of its own.
// Every check is made under mu and acted on after it is released.
func (p *ReceivePort) accept(req *Request, conn InConn) (*Reply, *Acceptance) {
	select {
	case p.turn <- struct{}{}:
		defer func() { <-p.turn }()
	case <-p.closed:
		return p.closedReply(), nil
	}
	if reply := p.refusal(req); reply != nil {
		return reply, nil
	}
	if h := p.cfg.ConnectionHandler; h != nil {
		ok := p.in.ask(runsGotConnection, p.name, p.closed, func() bool { return h.GotConnection(p, req.From) })
		if !ok && !p.isClosed() {
			return &Reply{Code: ReplyDenied, Detail: fmt.Sprintf("receive port %s refused %s", p.id, req.From)}, nil
		}
	}
	ic := &inConn{port: p, from: req.From, c: conn, watch: &stallWatch{}}
	if req.Route != "" {
		ic.note = " (" + routeNote + req.Route + ")"
	}
	p.mu.Lock()
	closed := p.isClosed() // closed while the handler decided
	if !closed {
		p.conns = append(p.conns, ic)
		p.stats.made.Add(1)
		p.stats.routed(routeKindOf(req.Route))
		if p.downcalls { // nobody can take the list otherwise: it would only grow
			p.newConns = append(p.newConns, req.From)
		}
	}
	p.mu.Unlock()
	if closed {
		return p.closedReply(), nil
	}
	p.in.stalls.add(ic)
	p.log.Debug("accepted connection", zap.Stringer("from", req.From))
	return &Reply{Code: ReplyAccepted, MaxMessage: p.in.cfg.MaxMessageSize}, &Acceptance{port: p, conn: conn, ic: ic}
}

func (p *ReceivePort) closedReply() *Reply {
	return &Reply{Code: ReplyNoSuchPort, Detail: fmt.Sprintf("receive port %s is closed", p.id)}
}

// refusal returns the reply that refuses req before the connection handler is asked,
// or nil. The caller holds the turn.
func (p *ReceivePort) refusal(req *Request) *Reply {
	if p.isClosed() {
		return p.closedReply()
	}
	theirs, err := ipl.ParsePortType(req.PortType)
	if err != nil {
		return &Reply{Code: ReplyTypeMismatch, Detail: fmt.Sprintf("receive port %s cannot use the sender's port type: %v", p.id, err)}
	}
	if !theirs.Equal(p.pt) {
		onlyS, onlyR := theirs.Diff(p.pt)
		return &Reply{Code: ReplyTypeMismatch, Detail: fmt.Sprintf("port types differ: only the send port has [%s]; only the receive port %s has [%s]",
			strings.Join(onlyS, ", "), p.id, strings.Join(onlyR, ", "))}
	}
	if cause := p.in.deadCause(req.From.Ibis); cause != nil {
		// A member declared dead that comes back (a stopped process resumed) must
		// rejoin the pool as a new member: its old identity has been buried.
		return &Reply{Code: ReplyDenied, Detail: fmt.Sprintf("receive port %s refuses %s: the registry declared its instance dead (%v); it must rejoin as a new member",
			p.id, req.From, cause)}
	}
	p.src.admit()
	p.mu.Lock()
	enabled := p.enabled
	var already bool
	for _, ic := range p.conns {
		if sameIbis(ic.from.Ibis, req.From.Ibis) && ic.from.Name == req.From.Name {
			already = true
		}
	}
	n := len(p.conns)
	p.mu.Unlock()
	switch {
	case !enabled:
		return &Reply{Code: ReplyDisabled, Detail: fmt.Sprintf("receive port %s does not accept connections yet", p.id)}
	case already:
		return &Reply{Code: ReplyAlreadyConnected, Detail: fmt.Sprintf("%s is already connected to %s", req.From, p.id)}
	case n > 0 && !p.pt.ManyToOne():
		return &Reply{Code: ReplyNotManyToX, Detail: fmt.Sprintf("receive port %s has a sender and its type is %s", p.id, p.pt.ConnectionKind())}
	}
	return nil
}

// startMessage reads the start of the connection's next message, which via delivers.
// A delivery that reads a stream marks the boundary on its guard first.
func (p *ReceivePort) startMessage(ic *inConn, via Delivery) (*readMessage, error) {
	if err := ic.rd.Next(); err != nil {
		return nil, err
	}
	m := &readMessage{port: p, ic: ic, via: via, seq: -1}
	if p.numbered {
		seq, err := ic.rd.ReadInt64()
		if err != nil {
			return nil, err
		}
		m.seq = seq
	}
	return m, nil
}

// connEnded removes a connection: err is nil or ErrClosedByPeer for a clean end (or
// when the port itself closed), anything else is a lost connection.
func (p *ReceivePort) connEnded(ic *inConn, err error) {
	p.mu.Lock()
	found := false
	for i, c := range p.conns {
		if c == ic {
			p.conns = append(p.conns[:i:i], p.conns[i+1:]...)
			found = true
			break
		}
	}
	if found {
		p.in.stalls.remove(ic)
	}
	clean := err == nil || errors.Is(err, serialization.ErrClosedByPeer)
	if found {
		p.stats.ended(clean)
	}
	if found && !clean && p.downcalls {
		p.lostConns = append(p.lostConns, ic.from)
	}
	p.mu.Unlock()
	if !found || p.isClosed() {
		return
	}
	var lostErr error
	if !clean {
		lostErr = fmt.Errorf("%w: connection from %s to %s: %w%s", ipl.ErrConnectionLost, ic.from, p.id, err, ic.note)
		if errors.Is(err, serialization.ErrCorrupt) || errors.Is(err, serialization.ErrTooLarge) {
			p.log.Warn("closing connection: bad data", zap.Stringer("from", ic.from), zap.Error(err))
		} else {
			p.log.Debug("connection lost", zap.Stringer("from", ic.from), zap.Error(err))
		}
	} else {
		p.log.Debug("sender disconnected", zap.Stringer("from", ic.from))
	}
	if h := p.cfg.ConnectionHandler; h != nil {
		from := ic.from
		p.in.notes.push(func() { h.LostConnection(p, from, lostErr) })
	}
}

// Receive waits for the next message.
func (p *ReceivePort) Receive(ctx context.Context) (ipl.ReadMessage, error) {
	if !p.explicit {
		return nil, fmt.Errorf("%s: %w: the port type has no %s", p.what("receive"), ipl.ErrUnsupported, ipl.ReceiveExplicit)
	}
	p.mu.Lock()
	upcalls := p.upcallStop != nil
	p.mu.Unlock()
	if upcalls {
		return nil, fmt.Errorf("%s: %w: message upcalls are enabled", p.what("receive"), ipl.ErrUnsupported)
	}
	// The port's closed channel is also closed when the instance ends, so waiting on
	// it and on ctx covers every way the wait can end.
	if !p.takeAll(ctx.Done(), p.closed) {
		if p.isClosed() {
			return nil, fmt.Errorf("%s: %w", p.what("receive"), ipl.ErrClosed)
		}
		return nil, ctxError(ctx, p.what("receive"))
	}
	m, why := p.next(ctx, nil, true)
	if why == gotMessage {
		m.whole = true
		return m, nil
	}
	p.releaseAll()
	p.src.idle() // a sender reported dead while this Receive held the port
	if why == waitClosed {
		return nil, fmt.Errorf("%s: %w", p.what("receive"), ipl.ErrClosed)
	}
	return nil, ctxError(ctx, p.what("receive"))
}

// waitResult says why a wait for a message ended.
type waitResult int

// Why a wait for a message ended.
const (
	gotMessage waitResult = iota
	waitDone              // the caller's context or stop channel
	waitClosed            // the port closed
	nothingYet            // no message, and the caller would not wait
)

// next finds the message for the token holder: one stashed as upcalls were disabled,
// else the next from the port's source.
func (p *ReceivePort) next(ctx context.Context, stop <-chan struct{}, wait bool) (*readMessage, waitResult) {
	if m := p.takeStash(); m != nil {
		return m, gotMessage
	}
	return p.src.next(ctx, stop, wait)
}

// what names an operation on the port for error messages; it is only called on the
// error paths, so the hot path formats nothing.
func (p *ReceivePort) what(op string) string { return op + " at " + p.id.String() }

// Poll returns a waiting message or nil; with poll upcalls it hands the message to the
// handler instead.
func (p *ReceivePort) Poll() (ipl.ReadMessage, error) {
	what := p.what("poll")
	p.mu.Lock()
	upcalls := p.upcallStop != nil
	p.mu.Unlock()
	pollUpcall := upcalls && p.pt.Has(ipl.ReceivePollUpcalls) && p.cfg.MessageHandler != nil
	if !pollUpcall && !p.pt.Has(ipl.ReceivePoll) {
		return nil, fmt.Errorf("%s: %w: the port type has no %s", what, ipl.ErrUnsupported, ipl.ReceivePoll)
	}
	if p.isClosed() {
		return nil, fmt.Errorf("%s: %w", what, ipl.ErrClosed)
	}
	if !p.tryTakeAll() {
		return nil, nil
	}
	m, why := p.next(context.Background(), nil, false)
	if why != gotMessage {
		p.releaseAll()
		return nil, nil
	}
	m.whole = true
	if !pollUpcall {
		return m, nil
	}
	p.upcall(m, nil, nil)
	return nil, nil
}

// EnableConnections lets senders connect.
func (p *ReceivePort) EnableConnections() {
	p.mu.Lock()
	p.enabled = true
	p.mu.Unlock()
}

// DisableConnections makes new senders wait.
func (p *ReceivePort) DisableConnections() {
	p.mu.Lock()
	p.enabled = false
	p.mu.Unlock()
}

// ConnectedTo lists the connected send ports.
func (p *ReceivePort) ConnectedTo() []ipl.SendPortIdentifier {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]ipl.SendPortIdentifier, len(p.conns))
	for i, ic := range p.conns {
		out[i] = ic.from
	}
	return out
}

// LostConnections returns senders lost since the last call.
func (p *ReceivePort) LostConnections() ([]ipl.SendPortIdentifier, error) {
	return p.take("LostConnections", &p.lostConns)
}

// NewConnections returns senders connected since the last call.
func (p *ReceivePort) NewConnections() ([]ipl.SendPortIdentifier, error) {
	return p.take("NewConnections", &p.newConns)
}

// take hands over and clears one of the downcall lists.
func (p *ReceivePort) take(call string, list *[]ipl.SendPortIdentifier) ([]ipl.SendPortIdentifier, error) {
	if !p.pt.Has(ipl.ConnectionDowncalls) {
		return nil, fmt.Errorf("%w: %s needs %s in the port type", ipl.ErrUnsupported, call, ipl.ConnectionDowncalls)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := *list
	*list = nil
	return out, nil
}

// Close closes the port at once; connected senders see their connections end. It is
// CloseContext(context.Background()).
func (p *ReceivePort) Close() error { return p.CloseContext(context.Background()) }

// CloseContext closes the port at once, ctx bounding the withdrawal of a Global port's
// name from the registry (see ipl.ReceivePort); it returns nil as Close does.
func (p *ReceivePort) CloseContext(ctx context.Context) error {
	p.close(ctx)
	return nil
}

// close closes the port once; a nil ctx leaves a Global name bound (a port that was
// never published, or the instance's own Close).
func (p *ReceivePort) close(ctx context.Context) {
	p.once.Do(func() {
		// Without the accept turn: a connection handler may close its own port.
		// accept re-checks closed under mu before it adds a connection.
		p.mu.Lock()
		close(p.closed)
		conns := p.conns
		p.conns = nil
		p.upcallStop = nil
		p.mu.Unlock()
		for _, ic := range conns {
			p.in.stalls.remove(ic)
			_ = ic.c.Close()
		}
		p.in.removeReceivePort(ctx, p)
	})
}
