package core

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibisgo/ibis/internal/wake"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/serialization"
)

// Direct receive: on a one-to-one port with explicit receipt only, Receive reads the
// connection on the caller's goroutine, as the blocking flavour of NioIbis does, instead
// of taking a message from the connection's reader goroutine. That saves a goroutine
// hand-off (and on a busy machine a wake-up of another thread) per message, which is
// most of the latency Ibis adds to a raw socket. It needs a transport whose stream can
// be peeked without consuming (a *bufio.Reader) and whose connection takes read
// deadlines, so that a cancelled Receive leaves the stream intact.

// peeker is a buffered stream that can look ahead without consuming.
type peeker interface {
	Peek(n int) ([]byte, error)
}

// deadliner is a connection whose reads can be cut short.
type deadliner interface {
	SetReadDeadline(t time.Time) error
}

// errConnEnded tells Receive that the direct connection ended and it should wait for
// another sender.
var errConnEnded = errors.New("core: direct connection ended")

type directState struct {
	peek  peeker
	dl    deadliner
	ended chan struct{}
	once  sync.Once
	died  atomic.Pointer[error] // the registry reported the sender's instance dead
}

// directCapable reports whether the port's type allows direct receipt.
func (p *ReceivePort) directCapable() bool {
	return !p.pt.ManyToOne() && p.pt.Has(ipl.ReceiveExplicit) &&
		!p.pt.HasAny(ipl.ReceivePoll, ipl.ReceiveAutoUpcalls, ipl.ReceivePollUpcalls)
}

// serveDirect parks the transport's goroutine while Receive reads the connection.
func (p *ReceivePort) serveDirect(ic *inConn, pk peeker, dl deadliner) {
	ic.direct = &directState{peek: pk, dl: dl, ended: make(chan struct{})}
	p.mu.Lock()
	p.directConn = ic
	p.mu.Unlock()
	if cause := p.in.deadCause(ic.from.Ibis); cause != nil {
		// Reported dead between the handshake and now: directPeerDied missed it.
		ic.direct.died.Store(&cause)
		p.checkDied()
	}
	wake.Poke(p.connArrived)
	select {
	case <-ic.direct.ended:
	case <-p.closed:
		p.connEnded(ic, nil)
	}
}

// directEnded retires the direct connection after a read error or a clean close.
func (p *ReceivePort) directEnded(ic *inConn, err error) {
	ic.direct.once.Do(func() {
		p.mu.Lock()
		if p.directConn == ic {
			p.directConn = nil
		}
		p.mu.Unlock()
		p.connEnded(ic, err)
		close(ic.direct.ended)
	})
}

// receiveDirect is Receive for direct-capable ports; the caller holds the token.
func (p *ReceivePort) receiveDirect(ctx context.Context) (*readMessage, error) {
	for {
		p.mu.Lock()
		ic := p.directConn
		p.mu.Unlock()
		if ic == nil {
			if m := p.takePush(); m != nil {
				return m, nil
			}
			select {
			case <-p.connArrived:
				continue
			case m := <-p.ready:
				// A connection the transport cannot read directly delivers the usual way.
				return m, nil
			case <-p.push.pending.Wake():
				// So does a push-mode connection (an event loop reads it).
				if m := p.takePush(); m != nil {
					return m, nil
				}
				continue
			case <-ctx.Done():
				return nil, ctxError(ctx, p.what("receive"))
			case <-p.closed:
				return nil, fmt.Errorf("%s: %w", p.what("receive"), ipl.ErrClosed)
			}
		}
		m, err := p.readDirect(ctx, ic)
		if errors.Is(err, errConnEnded) {
			continue
		}
		return m, err
	}
}

func (p *ReceivePort) readDirect(ctx context.Context, ic *inConn) (*readMessage, error) {
	d := ic.direct
	var err error
	// Waiting for the next header is an idle connection's wait: only a sender declared
	// dead is cut there (stall.go).
	ic.watch.state.Store(waitStart)
	defer ic.watch.state.Store(waitNone)
	if ctx.Done() == nil {
		_, err = d.peek.Peek(serialization.HeaderSize)
	} else {
		fired := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			_ = d.dl.SetReadDeadline(time.Now())
			close(fired)
		})
		_, err = d.peek.Peek(serialization.HeaderSize)
		if !stop() {
			<-fired
			_ = d.dl.SetReadDeadline(time.Time{})
			if ctx.Err() != nil && (err == nil || errors.Is(err, os.ErrDeadlineExceeded)) {
				// Peek consumed nothing: the stream is intact for the next Receive.
				return nil, ctxError(ctx, p.what("receive"))
			}
		}
	}
	if err == nil {
		ic.guard.boundary()
		err = ic.rd.Next()
	}
	if cut := ic.watch.cutErr(); err != nil && cut != nil {
		err = cut
	}
	if err != nil {
		if p.isClosed() {
			return nil, fmt.Errorf("%s: %w", p.what("receive"), ipl.ErrClosed)
		}
		p.directEnded(ic, err)
		return nil, errConnEnded
	}
	m := &readMessage{port: p, ic: ic, seq: -1}
	if p.numbered {
		if m.seq, err = ic.rd.ReadInt64(); err != nil {
			p.directEnded(ic, err)
			return nil, errConnEnded
		}
	}
	return m, nil
}

// probeWait bounds how long a probe waits for bytes that are on their way, and
// probeBusyWait how long a new sender's request waits for a Receive in progress to
// retire the old sender. Neither decides wrongly when it runs out: the old connection
// is then taken to be alive, and the new sender is told the port is taken.
const (
	probeWait     = time.Millisecond
	probeBusyWait = 20 * time.Millisecond
	// diedProbeWait bounds how long a probe of a sender reported dead waits for the
	// connection's end to arrive (the registry may hear of a death before this
	// connection's end has crossed the network). It holds the port meanwhile, which
	// costs nothing: the port's only sender is the dead one.
	diedProbeWait = 250 * time.Millisecond
)

// probeDirect answers, for a new sender, whether the port's direct connection has
// ended while nobody was receiving (a direct connection is only read by Receive). It
// returns false when it cannot tell because a Receive is in progress (or a message is
// live): that Receive sees the end itself, and accept waits a little for it.
func (p *ReceivePort) probeDirect() (decided bool) {
	if !p.token.tryTake() {
		return false
	}
	defer p.token.release()
	p.mu.Lock()
	ic := p.directConn
	p.mu.Unlock()
	if ic == nil {
		return true
	}
	var died error
	if cause := ic.direct.died.Load(); cause != nil {
		died = *cause
	}
	p.probeConn(ic, died)
	return true
}

// probeConn looks at what the direct connection ic holds, without consuming a
// message, and retires it when it has ended: the sender's goodbye, the end of the
// stream or a read error is next. A message waiting, or nothing within probeWait
// (diedProbeWait for a dead sender), leaves it alone: the sender is alive, or (dead)
// its end has not arrived yet, or what it sent before it died is still to be
// received. died, when the registry reported the sender's instance dead, is the cause
// the retirement reports. The caller holds the token.
func (p *ReceivePort) probeConn(ic *inConn, died error) {
	d := ic.direct
	wait := probeWait
	if died != nil {
		wait = diedProbeWait
	}
	_ = d.dl.SetReadDeadline(time.Now().Add(wait))
	hdr, err := d.peek.Peek(serialization.HeaderSize)
	_ = d.dl.SetReadDeadline(time.Time{})
	switch {
	case err == nil && hdr[2]&serialization.FlagClose != 0:
		p.directEnded(ic, ic.rd.Next()) // consumes the Close packet: a clean end
	case err == nil, errors.Is(err, os.ErrDeadlineExceeded):
	case died != nil:
		p.directEnded(ic, died)
	default:
		p.directEnded(ic, err)
	}
}

// directPeerDied marks the port's direct connection from the instance id, which the
// registry reported dead, and looks at it at once if the port is idle (checkDied). A
// direct connection is read only by Receive, so without this an idle port would list a
// dead sender until the next Receive or the next sender's request. When the port is
// busy, whoever holds it looks when it lets go (a finished message, a Receive that
// ends without one), and a Receive in progress meets the end itself.
func (p *ReceivePort) directPeerDied(id ipl.IbisIdentifier, cause error) {
	p.mu.Lock()
	ic := p.directConn
	p.mu.Unlock()
	if ic == nil || !sameIbis(ic.from.Ibis, id) {
		return
	}
	ic.direct.died.Store(&cause)
	p.checkDied()
}

// checkDied probes the direct connection of a sender reported dead, if the port is idle
// (it takes the token without waiting). Messages the sender finished before it died are
// still delivered: the connection is retired only once its end is next, so each
// finished message looks again.
func (p *ReceivePort) checkDied() {
	if !p.token.tryTake() {
		return
	}
	defer p.token.release()
	p.mu.Lock()
	ic := p.directConn
	p.mu.Unlock()
	if ic == nil {
		return
	}
	if cause := ic.direct.died.Load(); cause != nil {
		p.probeConn(ic, *cause)
	}
}

// awaitDirectEnd waits up to d for the port's direct connection to end.
func (p *ReceivePort) awaitDirectEnd(d time.Duration) {
	p.mu.Lock()
	ic := p.directConn
	p.mu.Unlock()
	if ic == nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ic.direct.ended:
	case <-t.C:
	case <-p.closed:
	}
}
