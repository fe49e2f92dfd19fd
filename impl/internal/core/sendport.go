package core

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/serialization"
)

// closeGrace bounds how long a clean disconnect waits for a live message to finish and
// for the Close packet to leave, before the connection is closed hard.
const closeGrace = 2 * time.Second

// SendPort is the shared implementation of ipl.SendPort.
//
// Its token (token.go) makes at most one message live and keeps the connection set
// still while a message is written. Disconnect holds it while it says goodbye (the
// Close packet must fall between messages); Connect takes it only for the moment it
// adds an accepted connection to the set, not while it dials, waits for the receiver's
// answer or retries (handshake.go), so a one-to-many port goes on sending to the
// receivers it has while a late one's port does not exist yet. Connects under way are
// recorded in the port (dialing): a second Connect to the same receive port (to any, on
// a port that takes one receiver) waits for the first one's outcome and then checks
// again, so it finds the connection (ErrAlreadyConnected, ErrNotOneToMany) instead of
// dialling a duplicate. A connection accepted after its port closed, or after the
// Connect's time ran out while a message was live, is ended with a goodbye, so its
// receiver sees a clean disconnect; Close does not wait for a Connect.
//
// The port is the serialization Sink: a packet goes to each connection the message
// started with, in turn (multicast). A connection that fails, or that was found broken
// since the message started, misses the rest of the message: it is removed and reported
// to downcalls and the disconnect handler, the other receivers still get whole
// messages, and the message's Send/Finish return an *ipl.ConnectionError matching
// ipl.ErrConnectionLost. A loss found only after the message's last write does not
// count against that message; with no connection left the message fails. Close sends
// a Close packet on every connection (a clean disconnect) unless a message is still
// live after closeGrace, in which case it cuts the connections.
type SendPort struct {
	in   *Instance
	pt   ipl.PortType
	name string
	cfg  ipl.SendPortConfig
	id   ipl.SendPortIdentifier
	log  *zap.Logger

	// token is held by the live message and by connection changes (token.go).
	token    token
	w        *serialization.Writer
	seq      int64
	numbered bool

	// mu guards the connection set. Lock order: a SendPort's mu before a sendConn's
	// mu (Connect adds a connection only if it is still alive); never the other way.
	mu    sync.Mutex
	conns []*sendConn
	lost  []ipl.ReceivePortIdentifier
	// lastLoss is why the latest lost connection went, until a connection joins or is
	// disconnected: a NewMessage that finds none left says why, not only "not connected".
	lastLoss error
	// Connects under way, each to its receive port: a second Connect to the same port
	// (to any, on a port that takes one receiver) waits for the first one's outcome.
	dialing []*dialing
	// The live message's view of the connections (only its holder of the token
	// touches these): the connections it started with, which of them missed part of
	// it, and the losses not yet reported.
	msgConns  []*sendConn
	msgMissed []bool
	msgLost   error
	// connsGen counts the changes of conns, closed and lastLoss (made under mu);
	// msgConns, msgClosed and msgLoss were copied at generation msgGen, so NewMessage
	// copies them, taking mu, only after a change.
	connsGen  atomic.Uint64
	msgGen    uint64
	msgClosed bool
	msgLoss   error
	// msgLimit is the message limit the writer has (sendlimit.go), 0 before the
	// first; msgLimitBy the receiver it is from, nil for the port's own.
	msgLimit   int64
	msgLimitBy *sendConn
	// cuts are connections whose receiver cut them and said how many messages it
	// took (a cut notice, cutnotice.go), not yet held against the messages their
	// Finish handed over: the next Finish, Disconnect or Close does that, once.
	cuts []*sendConn
	// unheard are connections left open after a failed write (closeLater) whose
	// receiver's end the transport has not read yet; takeCuts waits for them.
	unheard []*sendConn
	// waiting is len(cuts)+len(unheard), kept under mu, so that a Finish with
	// nothing to hold against its messages (the usual case) takes no lock for it.
	waiting atomic.Int32
	closed  bool
	closing chan struct{}
	scratch net.Buffers
	stats   portStats
	// msgs are the port's message objects, used in turn by NewMessage (writemessage.go);
	// only the holder of the token touches them.
	msgs    [2]writeMessage
	msgTurn uint8
}

var _ ipl.SendPort = (*SendPort)(nil)

// sendConn is one connection of a send port (OutConn is the transport's side of it).
type sendConn struct {
	sp *SendPort
	to ipl.ReceivePortIdentifier
	c  OutConn
	mu sync.Mutex
	// gone: removed from the port, cleanly or not. Written under mu (with why), read
	// without it on the hot path: every packet checks it for every connection.
	gone atomic.Bool
	why  error // why it was removed, when it broke
	// sent counts the messages whose Finish handed them whole to this connection; only
	// the holder of the port's token touches it.
	sent uint64
	// cut is the receiver's cut notice, once its transport read one.
	cut atomic.Pointer[ReceiverCut]
	// heard is closed once the transport reported an end that came from the
	// receiver (ErrReceiverEnded); nil for connections made without a transport.
	heard     chan struct{}
	heardOnce sync.Once
	// closeLater: the transport reported a failed write to a receiver that is gone,
	// and the connection is left open until the transport reads the receiver's end
	// (a cut notice may come before it); written under mu.
	closeLater bool
	// route names a route other than a direct dial (reverse set-up, relay via hub H),
	// for the error that reports the connection's loss; set before it is joined.
	route string
	// maxMessage is the largest message the receiver takes (its handshake reply; 0
	// when it did not say); set before the connection is joined.
	maxMessage int64
}

// dialing is a Connect under way; done is closed when it has ended, either way.
type dialing struct {
	to   ipl.ReceivePortIdentifier
	done chan struct{}
}

func newSendPort(in *Instance, pt ipl.PortType, name string, cfg ipl.SendPortConfig) *SendPort {
	sp := &SendPort{
		in:      in,
		pt:      pt,
		name:    name,
		cfg:     cfg,
		id:      ipl.SendPortIdentifier{Ibis: in.id, Name: name},
		log:     in.log.With(zap.String("sendport", name)),
		token:   newToken(),
		closing: make(chan struct{}),

		numbered: pt.Has(ipl.CommunicationNumbered),
	}
	sp.w = serialization.NewWriter(serializationKind(pt), sp, serialization.WithMaxMessageSize(in.cfg.MaxMessageSize))
	return sp
}

// Identifier names the port.
func (sp *SendPort) Identifier() ipl.SendPortIdentifier { return sp.id }

// Type returns the port's type.
func (sp *SendPort) Type() ipl.PortType { return sp.pt }

func (sp *SendPort) acquire(ctx context.Context, what string) error {
	if !sp.token.take(ctx.Done(), sp.closing) {
		if ctx.Err() != nil && !sp.isClosing() {
			return ctxError(ctx, fmt.Sprintf("%s: send port %q", what, sp.name))
		}
		return fmt.Errorf("%s: send port %q: %w", what, sp.name, ipl.ErrClosed)
	}
	if sp.isClosed() {
		sp.token.release()
		return fmt.Errorf("%s: send port %q: %w", what, sp.name, ipl.ErrClosed)
	}
	return nil
}

func (sp *SendPort) release() { sp.token.release() }

// isClosing reports whether Close has begun.
func (sp *SendPort) isClosing() bool {
	select {
	case <-sp.closing:
		return true
	default:
		return false
	}
}

func (sp *SendPort) isClosed() bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.closed
}

func sameIbis(a, b ipl.IbisIdentifier) bool { return a.Pool == b.Pool && a.ID == b.ID }

// Connect connects to a receive port, retrying while it does not exist or does not
// accept connections yet. It does not hold the port while it waits: messages to the
// receivers already connected go on. It takes the port's token only for the moment it
// adds the new connection to the set, so that the set changes between messages.
func (sp *SendPort) Connect(ctx context.Context, to ipl.IbisIdentifier, port string) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, sp.in.cfg.ConnectTimeout)
		defer cancel()
	}
	ctx, cancel := sp.in.bind(ctx, sp.closing)
	defer cancel()
	rid := ipl.ReceivePortIdentifier{Ibis: to, Name: port}
	what := fmt.Sprintf("connect %s to %s", sp.id, rid)
	if err := checkPortName("receive port", port); err != nil {
		return fmt.Errorf("connect %s: %w", sp.id, err)
	}
	if to.Address == "" {
		return fmt.Errorf("%s: %w: the identifier has no address", what, ipl.ErrRefused)
	}
	end, err := sp.reserve(ctx, rid, what)
	if err != nil {
		return err
	}
	defer end()

	req := &Request{From: sp.id, To: port, PortType: sp.pt.String(), Target: to.String()}
	backoff := 2 * time.Millisecond
	var last error // the receiver's last "not yet", for a timeout to report
	for {
		oc := &sendConn{sp: sp, to: rid, heard: make(chan struct{})}
		c, rep, rt, err := sp.in.dialPeer(ctx, to, req, oc.peerEnded)
		if err != nil {
			// A dial cut short by the deadline may return before the context
			// itself reports it: the clock decides.
			if dl, ok := ctx.Deadline(); ctx.Err() != nil || ok && !time.Now().Before(dl) {
				if last != nil {
					return fmt.Errorf("%w (last answer: %w)", ctxError(ctx, what), last)
				}
				if de := (*DialError)(nil); errors.As(err, &de) {
					return fmt.Errorf("%w (%v)", ctxError(ctx, what), de)
				}
				return ctxError(ctx, what)
			}
			return fmt.Errorf("%s: %w", what, err)
		}
		if rep.Code == ReplyAccepted {
			if rt.kind != routeDirect {
				oc.route = rt.String()
			}
			oc.maxMessage = rep.MaxMessage
			err := sp.join(ctx, oc, c, what)
			if err == nil {
				sp.stats.routed(rt.kind)
			}
			return err
		}
		rerr := rep.Err()
		last = rerr
		// No such port and disabled mean "not yet". Already connected can only come from
		// the receiver: it has not yet seen this port's earlier connection end (a
		// Disconnect followed at once by a Connect), so that is "not yet" too.
		if rep.Code != ReplyNoSuchPort && rep.Code != ReplyDisabled && rep.Code != ReplyAlreadyConnected {
			return fmt.Errorf("%s: %w", what, rerr)
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (last answer: %w)", ctxError(ctx, what), rerr)
		}
		if backoff < 200*time.Millisecond {
			backoff *= 2
		}
	}
}

// reserve checks that the port may connect to rid and records the attempt; end
// forgets it. A Connect to a port another Connect of this send port is already dialling
// (to any port, when this port's type takes one receiver) waits for that one's outcome
// and checks again: dialling too would only get "already connected" from the receiver
// (which means "not yet" to the retry loop), or make a second connection where only one
// may be. Waiting ends with ctx, which also ends when the port or the Ibis closes.
func (sp *SendPort) reserve(ctx context.Context, rid ipl.ReceivePortIdentifier, what string) (end func(), err error) {
	for {
		sp.mu.Lock()
		if sp.closed {
			sp.mu.Unlock()
			return nil, fmt.Errorf("%s: %w", what, ipl.ErrClosed)
		}
		for _, oc := range sp.conns {
			if sameIbis(oc.to.Ibis, rid.Ibis) && oc.to.Name == rid.Name {
				sp.mu.Unlock()
				return nil, fmt.Errorf("%s: %w", what, ipl.ErrAlreadyConnected)
			}
		}
		if len(sp.conns) > 0 && !sp.pt.OneToMany() {
			sp.mu.Unlock()
			return nil, fmt.Errorf("%s: %w: it is connected to %s and its type is %s", what, ipl.ErrNotOneToMany, sp.conns[0].to, sp.pt.ConnectionKind())
		}
		var busy chan struct{}
		for _, d := range sp.dialing {
			if !sp.pt.OneToMany() || sameIbis(d.to.Ibis, rid.Ibis) && d.to.Name == rid.Name {
				busy = d.done
				break
			}
		}
		if busy == nil {
			d := &dialing{to: rid, done: make(chan struct{})}
			sp.dialing = append(sp.dialing, d)
			sp.mu.Unlock()
			return func() {
				sp.mu.Lock()
				for i, x := range sp.dialing {
					if x == d {
						sp.dialing = append(sp.dialing[:i:i], sp.dialing[i+1:]...)
						break
					}
				}
				sp.mu.Unlock()
				close(d.done)
			}, nil
		}
		sp.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, ctxError(ctx, what)
		}
	}
}

// join adds an accepted connection to the port, holding the token just for that, so
// that the connection set changes between messages. A connection that cannot join (the
// port closed, the Connect's time ran out while a message was live) is ended with a
// goodbye: the receiver accepted it, and should see a clean disconnect, not a loss. One
// that broke already is closed.
func (sp *SendPort) join(ctx context.Context, oc *sendConn, c OutConn, what string) error {
	oc.mu.Lock()
	oc.c = c
	gone := oc.gone.Load()
	oc.mu.Unlock()
	if gone {
		_ = c.Close()
		return fmt.Errorf("%s: %w: the receiver closed the connection at once", what, ipl.ErrConnectionLost)
	}
	if err := sp.acquire(ctx, what); err != nil {
		_ = oc.closeClean()
		return err
	}
	defer sp.release()
	// The connection joins the port only if it is still alive and the port still open,
	// checked under the port's lock so that neither can change in between.
	sp.mu.Lock()
	oc.mu.Lock()
	gone, closed := oc.gone.Load(), sp.closed
	if !gone && !closed {
		sp.conns = append(sp.conns, oc)
		sp.lastLoss = nil
		sp.connsGen.Add(1)
		sp.stats.made.Add(1)
	}
	oc.mu.Unlock()
	sp.mu.Unlock()
	switch {
	case closed:
		_ = oc.closeClean()
		return fmt.Errorf("%s: %w", what, ipl.ErrClosed)
	case gone:
		_ = c.Close()
		return fmt.Errorf("%s: %w: the receiver closed the connection at once", what, ipl.ErrConnectionLost)
	}
	sp.log.Debug("connected", zap.Stringer("to", oc.to))
	return nil
}

// ConnectGlobal connects to the receive port published under name.
func (sp *SendPort) ConnectGlobal(ctx context.Context, name string) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, sp.in.cfg.ConnectTimeout)
		defer cancel()
	}
	bctx, cancel := sp.in.bind(ctx)
	defer cancel()
	id, port, err := sp.in.reg.Lookup(bctx, name)
	if err != nil {
		if bctx.Err() != nil {
			return ctxError(bctx, fmt.Sprintf("looking up receive port %q", name))
		}
		return fmt.Errorf("looking up receive port %q: %w", name, registryError(bctx, err))
	}
	return sp.Connect(ctx, id, port)
}

// Disconnect ends the connection to a receive port cleanly.
func (sp *SendPort) Disconnect(ctx context.Context, from ipl.ReceivePortIdentifier) error {
	ctx, cancel := sp.in.bind(ctx)
	defer cancel()
	what := fmt.Sprintf("disconnect %s from %s", sp.id, from)
	if err := sp.acquire(ctx, what); err != nil {
		return err
	}
	defer sp.release()
	sp.mu.Lock()
	var oc *sendConn
	for i, c := range sp.conns {
		if sameIbis(c.to.Ibis, from.Ibis) && c.to.Name == from.Name {
			oc = c
			sp.conns = append(sp.conns[:i:i], sp.conns[i+1:]...)
			sp.lastLoss = nil
			sp.connsGen.Add(1)
			break
		}
	}
	sp.mu.Unlock()
	if oc == nil {
		return fmt.Errorf("%s: %w", what, ipl.ErrNotConnected)
	}
	err := oc.closeClean()
	return errors.Join(err, sp.takeCuts(oc))
}

// closeClean sends the Close packet and closes; the send port has already dropped oc.
func (oc *sendConn) closeClean() error {
	oc.mu.Lock()
	if oc.gone.Load() {
		oc.mu.Unlock()
		return nil
	}
	oc.gone.Store(true)
	oc.mu.Unlock()
	oc.sp.stats.ended(true)
	oc.hearLast(oc.c, nil)
	t := time.AfterFunc(closeGrace, func() { _ = oc.c.Close() })
	err := serialization.WriteClose(oc.c)
	if d, ok := oc.c.(Drainer); ok && err == nil {
		// A queueing connection writes the goodbye in the background: let it, since
		// Close cuts what is still queued.
		err = d.Drain()
	}
	t.Stop()
	if peerWentFirst(err) {
		// The receiver went first (its port closed, or it cut the connection): there
		// is nobody to say goodbye to. A cut notice it sent is read (the socket is
		// broken, so its transport reports the end at once) and held against the
		// messages by the caller (takeCuts).
		oc.sp.log.Debug("receiver gone before the goodbye", zap.Stringer("to", oc.to), zap.Error(err))
		oc.hearLast(oc.c, err)
		err = nil
	}
	// Closing may fail the same way: TLS says goodbye with an alert of its own, which
	// finds the socket closed when the receiver has already read our Close and gone.
	if cerr := oc.c.Close(); err == nil && cerr != nil && !errors.Is(cerr, net.ErrClosed) && !peerWentFirst(cerr) {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("closing connection to %s: %w", oc.to, err)
	}
	return nil
}

// peerEnded is the transport's report that the connection ended (its lost callback):
// it keeps the receiver's cut notice, if the end came with one, for takeCuts, and
// removes the connection (broken).
func (oc *sendConn) peerEnded(err error) {
	var rc *ReceiverCut
	if errors.As(err, &rc) && oc.cut.CompareAndSwap(nil, rc) {
		sp := oc.sp
		sp.mu.Lock()
		sp.cuts = append(sp.cuts, oc)
		sp.waiting.Add(1)
		sp.mu.Unlock()
	}
	if oc.heard != nil && errors.Is(err, ErrReceiverEnded) {
		oc.heardOnce.Do(func() { close(oc.heard) })
	}
	// No hearLast here: this runs on the transport's own goroutine (its watch, or an
	// event loop), which is what would read the receiver's end.
	_ = oc.lose(err, false)
}

// hearLast lets the transport read what the receiver wrote before c is closed: a
// receiver writes only a cut notice, and closing the socket would throw it away unread.
// It waits (up to closeGrace) for the transport to report the receiver's end when a
// write failed because the receiver was gone (why: broken pipe, reset; the notice, if
// any, came before that end) or when the kernel holds bytes from the receiver unread
// (PendingCounter); otherwise it returns at once.
func (oc *sendConn) hearLast(c OutConn, why error) {
	if oc.heard == nil {
		return
	}
	wait := writeToGone(why)
	if pc, ok := c.(PendingCounter); ok && !wait {
		n, known := pc.Pending()
		wait = known && n > 0
	}
	if !wait {
		return
	}
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-oc.heard:
	case <-t.C:
	}
}

// writeToGone reports whether err is a write that failed because the receiver was
// gone (broken pipe, reset): its end, and a cut notice before it, are in the socket.
func writeToGone(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// awaitUnheard waits (up to closeGrace in all) until the transport has read the
// receiver's end of every connection left open after a failed write, and closes those
// whose end does not come; the caller holds the port's token.
func (sp *SendPort) awaitUnheard() {
	sp.mu.Lock()
	list := sp.unheard
	sp.unheard = nil
	sp.waiting.Add(-int32(len(list)))
	sp.mu.Unlock()
	if len(list) == 0 {
		return
	}
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	for _, oc := range list {
		select {
		case <-oc.heard:
		case <-t.C:
		}
		oc.closeIfLeft()
	}
}

// closeIfLeft closes the connection if a failed write left it open (closeLater).
func (oc *sendConn) closeIfLeft() {
	oc.mu.Lock()
	c, later := oc.c, oc.closeLater
	oc.closeLater = false
	oc.mu.Unlock()
	if later {
		_ = c.Close()
	}
}

// takeCuts holds the cut notices that arrived against the messages each connection
// was handed: a receiver that took fewer than the port's Finish handed over threw the
// rest away, and the error says how many. Only oc's notice when oc is not nil, else
// all of them; each is held once. The caller holds the port's token, so no Finish
// changes the counts meanwhile.
func (sp *SendPort) takeCuts(only *sendConn) error {
	if sp.waiting.Load() == 0 {
		return nil
	}
	sp.awaitUnheard()
	sp.mu.Lock()
	var mine []*sendConn
	keep := sp.cuts[:0]
	for _, oc := range sp.cuts {
		if only == nil || oc == only {
			mine = append(mine, oc)
		} else {
			keep = append(keep, oc)
		}
	}
	clear(sp.cuts[len(keep):])
	sp.cuts = keep
	sp.waiting.Add(-int32(len(mine)))
	sp.mu.Unlock()
	var errs []error
	for _, oc := range mine {
		rc := oc.cut.Load()
		if rc.Taken >= oc.sent {
			continue // it took every message it was handed
		}
		errs = append(errs, &ipl.ConnectionError{From: sp.id, To: oc.to, Err: fmt.Errorf(
			"%w: %w; this port's Finish had handed it %d, so the last %d were thrown away",
			ipl.ErrConnectionLost, rc, oc.sent, oc.sent-rc.Taken)})
	}
	return errors.Join(errs...)
}

// peerWentFirst tells whether err only says that the receiving side closed before us.
func peerWentFirst(err error) bool {
	return errors.Is(err, ipl.ErrConnectionLost) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// WritePacket is the serialization sink: it writes packets to every connection the
// message started with, in turn. A connection that fails, or that was found broken
// since the message started, misses the rest of the message: it is dropped, the loss
// is reported by the message's Send and Finish, and the others carry on so that the
// receivers still connected get whole messages. A connection found broken after the
// message's last write does not count against the message. Only when no connection is
// left does WritePacket fail, which makes the message fail.
func (sp *SendPort) WritePacket(bufs net.Buffers) error {
	if len(sp.msgConns) > 0 {
		if sh, ok := sp.msgConns[0].c.(Sharer); ok {
			if len(sp.msgConns) == 1 {
				return sp.writePieces(bufs)
			}
			return sp.writeShared(sh, bufs)
		}
	}
	if len(sp.msgConns) == 1 {
		return sp.deliver(func(oc *sendConn) error { return oc.c.WritePacket(bufs) })
	}
	// WritePacket may consume its buffers: each connection gets a fresh copy of the
	// list (not of the bytes).
	err := sp.deliver(func(oc *sendConn) error {
		sp.scratch = append(sp.scratch[:0], bufs...)
		return oc.c.WritePacket(sp.scratch)
	})
	clear(sp.scratch)
	return err
}

// shareChunk is the most a queueing transport is handed to copy at once: a large slice
// goes out in pieces, so what is copied ahead of the socket stays bounded.
const shareChunk = 1 << 20

// writeShared hands the packets to connections that queue them: each piece of at most
// shareChunk bytes is copied once and queued on every connection.
func (sp *SendPort) writeShared(sh Sharer, bufs net.Buffers) error {
	for len(bufs) > 0 {
		var piece net.Buffers
		piece, bufs = cutBuffers(sp.scratch[:0], bufs, shareChunk)
		pkt := sh.Share(piece)
		clear(piece)
		sp.scratch = piece[:0]
		err := sp.deliver(func(oc *sendConn) error { return oc.c.(Sharer).WriteShared(pkt) })
		pkt.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// writePieces hands the packets to the one connection of the message, a queueing one,
// in pieces of at most shareChunk bytes through its own WritePacket: with nothing
// queued it writes the caller's bytes itself and copies only what the socket did not
// take, where Share would copy every packet before its first byte is written.
func (sp *SendPort) writePieces(bufs net.Buffers) error {
	for len(bufs) > 0 {
		var piece net.Buffers
		piece, bufs = cutBuffers(sp.scratch[:0], bufs, shareChunk)
		err := sp.deliver(func(oc *sendConn) error { return oc.c.WritePacket(piece) })
		clear(piece)
		sp.scratch = piece[:0]
		if err != nil {
			return err
		}
	}
	return nil
}

// cutBuffers moves up to limit bytes from the front of bufs into dst and returns dst
// and what is left; a buffer that crosses the limit is split.
func cutBuffers(dst, bufs net.Buffers, limit int) (net.Buffers, net.Buffers) {
	for len(bufs) > 0 && limit > 0 {
		b := bufs[0]
		if len(b) > limit {
			dst = append(dst, b[:limit])
			bufs[0] = b[limit:]
			return dst, bufs
		}
		dst = append(dst, b)
		limit -= len(b)
		bufs = bufs[1:]
	}
	return dst, bufs
}

// deliver runs write on every connection the live message still has. A connection that
// fails, or that was found broken since the message started, misses the rest of the
// message; deliver fails only when no connection is left.
func (sp *SendPort) deliver(write func(oc *sendConn) error) error {
	alive := 0
	var errs []error
	for i, oc := range sp.msgConns {
		if sp.msgMissed[i] {
			continue
		}
		if err := oc.lostErr(); err != nil {
			sp.msgMissed[i] = true
			errs = append(errs, err)
			continue
		}
		if err := write(oc); err != nil {
			sp.msgMissed[i] = true
			errs = append(errs, oc.broken(err))
			continue
		}
		alive++
	}
	sp.msgLost = errors.Join(sp.msgLost, errors.Join(errs...))
	if alive == 0 {
		if len(errs) == 0 { // every connection had already missed part of the message
			return fmt.Errorf("send port %s: %w: no connection left", sp.id, ipl.ErrConnectionLost)
		}
		return errors.Join(errs...)
	}
	return nil
}

// drain waits until the live message's queued packets are written on every connection
// that queues them; a connection that breaks meanwhile counts as missing the message.
func (sp *SendPort) drain() {
	var errs []error
	for i, oc := range sp.msgConns {
		d, ok := oc.c.(Drainer)
		if !ok || sp.msgMissed[i] {
			continue
		}
		if err := d.Drain(); err != nil {
			sp.msgMissed[i] = true
			errs = append(errs, oc.broken(err))
		}
	}
	sp.msgLost = errors.Join(sp.msgLost, errors.Join(errs...))
}

// lostErr returns why the connection was dropped, or nil while it lives.
func (oc *sendConn) lostErr() error {
	if !oc.gone.Load() {
		return nil
	}
	oc.mu.Lock()
	defer oc.mu.Unlock()
	if oc.why == nil {
		return &ipl.ConnectionError{From: oc.sp.id, To: oc.to, Err: fmt.Errorf("%w: it was closed", ipl.ErrConnectionLost)}
	}
	return oc.why
}

// takeBroken returns, and forgets, the losses the live message has run into.
func (sp *SendPort) takeBroken() error {
	err := sp.msgLost
	sp.msgLost = nil
	return err
}

// broken removes a connection that failed (write error, peer closed, peer died),
// tells the program through downcalls and the disconnect handler, and returns the
// error that describes the loss.
func (oc *sendConn) broken(cause error) error { return oc.lose(cause, true) }

// lose is broken; hear says whether to let the transport read what the receiver
// wrote before closing the connection (hearLast), which only a goroutine other than
// the transport's may wait for.
func (oc *sendConn) lose(cause error, hear bool) error {
	sp := oc.sp
	if !errors.Is(cause, ipl.ErrConnectionLost) {
		cause = fmt.Errorf("%w: %w", ipl.ErrConnectionLost, cause)
	}
	if oc.route != "" && !strings.Contains(cause.Error(), routeNote) {
		cause = fmt.Errorf("%w ("+routeNote+"%s)", cause, oc.route)
	}
	var err error = &ipl.ConnectionError{From: sp.id, To: oc.to, Err: cause}
	ended := errors.Is(cause, ErrReceiverEnded)
	oc.mu.Lock()
	if oc.gone.Load() {
		c, later := oc.c, oc.closeLater && ended
		if later {
			oc.closeLater = false
		}
		oc.mu.Unlock()
		if later { // the receiver's end came: what it wrote has been read
			_ = c.Close()
		}
		return err
	}
	oc.why = err
	oc.gone.Store(true)
	c := oc.c
	// A failed write reported by the transport itself, on its own goroutine (which
	// cannot wait for itself): leave the connection open for the transport to read
	// the receiver's end, and let takeCuts wait for it.
	later := !hear && !ended && c != nil && oc.heard != nil && writeToGone(cause)
	oc.closeLater = later
	oc.mu.Unlock()
	sp.stats.ended(false)
	switch {
	case later:
		sp.mu.Lock()
		sp.unheard = append(sp.unheard, oc)
		sp.waiting.Add(1)
		sp.mu.Unlock()
	case c != nil:
		if hear {
			oc.hearLast(c, cause)
		}
		_ = c.Close()
	}
	sp.mu.Lock()
	found := false
	for i, x := range sp.conns {
		if x == oc {
			sp.conns = append(sp.conns[:i:i], sp.conns[i+1:]...)
			sp.lastLoss = err
			sp.connsGen.Add(1)
			found = true
			break
		}
	}
	if found && sp.pt.Has(ipl.ConnectionDowncalls) { // else nobody could take the list
		sp.lost = append(sp.lost, oc.to)
	}
	closed := sp.closed
	sp.mu.Unlock()
	if !found || closed {
		return err
	}
	sp.log.Debug("lost connection", zap.Stringer("to", oc.to), zap.Error(cause))
	if h := sp.cfg.DisconnectHandler; h != nil {
		to := oc.to
		sp.in.notes.push(func() { h(sp, to, err) })
	}
	return err
}

func (sp *SendPort) peerGone(id ipl.IbisIdentifier, cause error) {
	sp.mu.Lock()
	var hit []*sendConn
	for _, oc := range sp.conns {
		if sameIbis(oc.to.Ibis, id) {
			hit = append(hit, oc)
		}
	}
	sp.mu.Unlock()
	for _, oc := range hit {
		_ = oc.broken(cause)
	}
}

// cutsUnlocked is takeCuts for a Close that could not take the token: the live
// message's holder may still count, so the counts are read as they are.
func (sp *SendPort) cutsUnlocked() error {
	sp.mu.Lock()
	n := len(sp.cuts)
	unheard := sp.unheard
	sp.unheard = nil
	sp.waiting.Add(-int32(len(unheard)))
	sp.mu.Unlock()
	for _, oc := range unheard { // no waiting here: close what was left open
		oc.closeIfLeft()
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d receivers cut their connections (cut notices) before the port closed", ipl.ErrConnectionLost, n)
}

// countSent records that the live message was handed whole to every connection that
// did not miss part of it; the caller holds the token.
func (sp *SendPort) countSent() {
	for i, oc := range sp.msgConns {
		if !sp.msgMissed[i] {
			oc.sent++
		}
	}
}

// NewMessage starts a message, waiting while another one lives.
func (sp *SendPort) NewMessage(ctx context.Context) (ipl.WriteMessage, error) {
	// sp.closing is closed by Close, which the instance's Close calls, so the wait ends
	// with the Ibis too.
	if !sp.token.take(ctx.Done(), sp.closing) {
		if ctx.Err() != nil && !sp.isClosing() {
			return nil, ctxError(ctx, "new message at "+sp.id.String())
		}
		return nil, fmt.Errorf("new message at %s: %w", sp.id, ipl.ErrClosed)
	}
	if sp.connsGen.Load() != sp.msgGen {
		sp.mu.Lock()
		sp.msgGen = sp.connsGen.Load()
		sp.msgClosed = sp.closed
		sp.msgLoss = sp.lastLoss
		clear(sp.msgConns)
		sp.msgConns = append(sp.msgConns[:0], sp.conns...)
		sp.mu.Unlock()
		sp.fitLimit()
	}
	n, closed := len(sp.msgConns), sp.msgClosed
	if cap(sp.msgMissed) < n {
		sp.msgMissed = make([]bool, n)
	} else {
		sp.msgMissed = sp.msgMissed[:n]
		clear(sp.msgMissed)
	}
	sp.msgLost = nil
	if closed {
		sp.release()
		return nil, fmt.Errorf("new message at %s: %w", sp.id, ipl.ErrClosed)
	}
	if n == 0 {
		sp.release()
		if sp.msgLoss != nil {
			// Say why: a loss found after the last message's writes (a reader or a
			// keepalive found it) counted against no message, and nobody else would.
			return nil, fmt.Errorf("new message at %s: %w: the last connection was lost: %w", sp.id, ipl.ErrNotConnected, sp.msgLoss)
		}
		return nil, fmt.Errorf("new message at %s: %w: connect the port first", sp.id, ipl.ErrNotConnected)
	}
	sp.w.Reset()
	m := &sp.msgs[sp.msgTurn]
	sp.msgTurn ^= 1
	*m = writeMessage{sp: sp, w: sp.w, seq: -1}
	if sp.numbered {
		if err := sp.w.WriteInt64(sp.seq); err != nil {
			sp.release() // the number is not used up: the next message has it
			return nil, writeError(err)
		}
		m.seq = sp.seq
		sp.seq++
	}
	return m, nil
}

// ConnectedTo lists the connected receive ports.
func (sp *SendPort) ConnectedTo() []ipl.ReceivePortIdentifier {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	out := make([]ipl.ReceivePortIdentifier, len(sp.conns))
	for i, oc := range sp.conns {
		out[i] = oc.to
	}
	return out
}

// LostConnections returns connections lost since the last call.
func (sp *SendPort) LostConnections() ([]ipl.ReceivePortIdentifier, error) {
	if !sp.pt.Has(ipl.ConnectionDowncalls) {
		return nil, fmt.Errorf("%w: LostConnections needs %s in the port type", ipl.ErrUnsupported, ipl.ConnectionDowncalls)
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	out := sp.lost
	sp.lost = nil
	return out, nil
}

// Close disconnects cleanly from every receive port. A message still live after a short
// grace is cut off: its connections are closed hard.
func (sp *SendPort) Close() error {
	sp.mu.Lock()
	if sp.closed {
		sp.mu.Unlock()
		return nil
	}
	sp.closed = true
	sp.connsGen.Add(1)
	close(sp.closing)
	sp.mu.Unlock()
	defer sp.in.removeSendPort(sp.name)

	clean := sp.token.takeWithin(closeGrace)
	sp.mu.Lock()
	conns := sp.conns
	sp.conns = nil
	sp.connsGen.Add(1)
	sp.mu.Unlock()
	if clean {
		// Each goodbye may wait up to closeGrace for a receiver that does not read:
		// say them all at once, so closing takes that long at most, not that long per
		// connection.
		results := make([]error, len(conns))
		var wg sync.WaitGroup
		for i, oc := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = oc.closeClean()
			}()
		}
		wg.Wait()
		return errors.Join(errors.Join(results...), sp.takeCuts(nil))
	}
	for _, oc := range conns {
		oc.mu.Lock()
		oc.gone.Store(true)
		oc.why = fmt.Errorf("%w: send port %s was closed while this message was live", ipl.ErrClosed, sp.id)
		oc.mu.Unlock()
		sp.stats.ended(false)
		_ = oc.c.Close()
	}
	return errors.Join(fmt.Errorf("close %s: %w: a message was still live after %v; its connections were cut", sp.id, ipl.ErrConnectionLost, closeGrace), sp.cutsUnlocked())
}
