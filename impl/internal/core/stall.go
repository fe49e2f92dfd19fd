package core

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/wake"
	"github.com/ibisgo/ibis/ipl"
)

// Stalled senders. A sender that stops inside a message (a stopped process, a broken
// network) must not hold its receive port, or the memory of the message's start, for
// long. Every incoming connection has a stallWatch: its reader (or the transport's own
// source, which counts every push) marks when it waits for bytes, at a message's start
// or inside one, and counts the reads that brought some. One watchdog goroutine per
// instance, running while it has incoming connections, looks at every watch four times
// per message timeout; a connection whose reader waited inside a message with no
// progress for a timeout is cut (ErrStalled, ErrConnectionLost), whether or not the port
// was reading it, and the port's other senders go on. Time a program holds a message,
// time between messages and a connection paused for flow control never count.
//
// The watchdog also ends the connections of a member the registry declared dead, once
// drained: after diedGrace it cuts a connection whose reader waits with no progress at
// two looks in a row while the kernel holds nothing unread for it (PendingCounter), so a
// message that arrived whole is delivered and one the member only began is not; a
// member that keeps sending is cut a message timeout after its death. Before a cut the
// receiver tells the sender how many whole messages it took (CutNotifier, the cut
// notice), and the instance then refuses the member (ReplyDenied): it must rejoin.
//
// This is the one description of the mechanism; docs/DESIGN.md and README.md point here.

// Wait states of a connection's reader.
const (
	waitNone  int32 = iota // not reading the connection
	waitStart              // waiting for the first bytes of a message (an idle connection)
	waitMid                // waiting for more bytes of a message that has begun
)

// diedGrace is how long the bytes a dead member sent before it died get to arrive
// before a reader waiting for more is cut. The registry can hear of a death before the
// dead member's last bytes (or its end) have crossed the network.
const diedGrace = 250 * time.Millisecond

// stallWatch is the progress of one incoming connection, as its readers report it.
type stallWatch struct {
	state    atomic.Int32          // waitNone, waitStart or waitMid
	progress atomic.Uint64         // reads (or pushes) that brought bytes
	cut      atomic.Pointer[error] // why the watchdog cut the connection
	died     atomic.Pointer[diedMark]

	// The watchdog's own view; only its goroutine touches these.
	seen    uint64
	stallAt time.Time // when it first saw the current wait without progress
	// For a dead member's connection: the progress at the last look that found its
	// reader waiting (idle is false when the last look did not), so that a cut needs
	// two such looks in a row with nothing read in between.
	idleAt uint64
	idle   bool
}

// PendingCounter is implemented by incoming connections that can tell how many bytes
// the kernel holds unread for them; ok is false when that cannot be known. The stall
// watchdog cuts a dead member's connection only once they are read (drained).
type PendingCounter interface {
	Pending() (n int, ok bool)
}

// diedMark records when the registry reported the sender's instance dead, and why.
type diedMark struct {
	at    time.Time
	cause error
}

// cutErr returns why the watchdog cut the connection, or nil.
func (w *stallWatch) cutErr() error {
	if p := w.cut.Load(); p != nil {
		return *p
	}
	return nil
}

// guardedReader is the stream a connection's serialization reader reads: it reports
// waits and progress to the connection's stallWatch and, once the watchdog cut the
// connection, gives the reason instead of the socket's "closed" error.
type guardedReader struct {
	r   io.Reader
	w   *stallWatch
	mid bool // bytes of the current message have been read (only the reader touches it)
}

// boundary tells the guard that the next read starts a message: until its first bytes
// come, a wait is an idle connection's, not a stall.
func (g *guardedReader) boundary() { g.mid = false }

func (g *guardedReader) Read(p []byte) (int, error) {
	g.waitFor()
	n, err := g.r.Read(p)
	return n, g.done(n, err)
}

// Discard skips n bytes without copying when the stream can (a *bufio.Reader), so
// that the serialization reader keeps its fast way of skipping unread bodies.
func (g *guardedReader) Discard(n int) (int, error) {
	d, ok := g.r.(interface{ Discard(int) (int, error) })
	if !ok {
		k, err := io.CopyN(io.Discard, g, int64(n))
		return int(k), err
	}
	g.waitFor()
	k, err := d.Discard(n)
	return k, g.done(k, err)
}

// waitFor marks the start of a read that may wait for the socket.
func (g *guardedReader) waitFor() {
	if g.mid {
		g.w.state.Store(waitMid)
	} else {
		g.w.state.Store(waitStart)
	}
}

// done records a read's result; a read the watchdog cut short reports why.
func (g *guardedReader) done(n int, err error) error {
	g.w.state.Store(waitNone)
	if n > 0 {
		g.mid = true
		g.w.progress.Add(1)
	}
	if err != nil {
		if cut := g.w.cutErr(); cut != nil {
			return cut
		}
	}
	return err
}

// watchdog finds stalled connections of one instance. It runs while the instance has
// incoming connections and ends with the instance.
//
// Locks: mu is a leaf guarding the set of connections and the running flag; the
// connections are looked at and cut after it is released.
type watchdog struct {
	in      *Instance
	timeout time.Duration // the message timeout; <= 0: only dead members are cut

	mu      sync.Mutex
	conns   map[*inConn]struct{}
	running bool
	wake    chan struct{} // a member died: look soon
}

func newWatchdog(in *Instance) *watchdog {
	return &watchdog{in: in, timeout: in.cfg.MessageTimeout, conns: map[*inConn]struct{}{}, wake: make(chan struct{}, 1)}
}

// add starts watching ic, starting the watchdog goroutine if it is not running.
func (d *watchdog) add(ic *inConn) {
	if d == nil { // a port built without an instance (unit tests)
		return
	}
	d.mu.Lock()
	d.conns[ic] = struct{}{}
	start := !d.running
	d.running = true
	d.mu.Unlock()
	if start {
		d.in.Go(d.run)
	}
}

// remove stops watching ic.
func (d *watchdog) remove(ic *inConn) {
	if d == nil { // a port built without an instance (unit tests)
		return
	}
	d.mu.Lock()
	delete(d.conns, ic)
	d.mu.Unlock()
}

// peerDied marks every watched connection from the member id, which the registry
// reported dead, and makes the watchdog look soon.
func (d *watchdog) peerDied(id ipl.IbisIdentifier, cause error) {
	mark := &diedMark{at: time.Now(), cause: fmt.Errorf("%w: %w", ipl.ErrStalled, cause)}
	d.mu.Lock()
	for ic := range d.conns {
		if sameIbis(ic.from.Ibis, id) {
			ic.watch.died.CompareAndSwap(nil, mark)
		}
	}
	d.mu.Unlock()
	wake.Poke(d.wake)
}

// period is how often the watchdog looks: a quarter of the timeout (a stall is cut
// between one and one and a quarter timeouts after it began), and every diedGrace
// while a dead member's connection is still open.
func (d *watchdog) period(dying bool) time.Duration {
	p := time.Second
	if d.timeout > 0 {
		p = max(d.timeout/4, time.Millisecond)
	}
	if dying {
		p = min(p, diedGrace)
	}
	return p
}

// run looks at the connections until none is left or the instance ends.
func (d *watchdog) run() {
	t := time.NewTimer(d.period(false))
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-d.wake:
		case <-d.in.done:
			return
		}
		d.mu.Lock()
		if len(d.conns) == 0 {
			d.running = false
			d.mu.Unlock()
			return
		}
		list := make([]*inConn, 0, len(d.conns))
		for ic := range d.conns {
			list = append(list, ic)
		}
		d.mu.Unlock()
		now := time.Now()
		dying := false
		for _, ic := range list {
			if d.look(ic, now) {
				dying = true
			}
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(d.period(dying))
	}
}

// look checks one connection and cuts it when it stalled; it reports whether the
// connection is a dead member's that is still open (the watchdog then looks again
// soon).
func (d *watchdog) look(ic *inConn, now time.Time) (dying bool) {
	w := ic.watch
	if w.cut.Load() != nil {
		return false
	}
	pr := w.progress.Load()
	waiting, mid := ic.waiting()
	switch {
	case !waiting:
		w.seen, w.stallAt = pr, time.Time{}
	case pr != w.seen:
		// Bytes came since the last look and the reader waits again: its wait began
		// at most a period ago. Timing it from now cuts it between one and one and a
		// quarter timeouts after it began; timing it from the next look (as when no
		// bytes had come) would make that one and a quarter to one and a half.
		w.seen, w.stallAt = pr, now
	case w.stallAt.IsZero():
		w.stallAt = now
	}
	stalledFor := time.Duration(0)
	if !w.stallAt.IsZero() {
		stalledFor = now.Sub(w.stallAt)
	}
	if m := w.died.Load(); m != nil {
		since := now.Sub(m.at)
		switch {
		case since >= diedGrace && d.drained(ic, pr, waiting):
			d.cut(ic, m.cause)
		case d.timeout > 0 && since >= d.timeout:
			d.cut(ic, fmt.Errorf("%w (still sending a message timeout after it was declared dead)", m.cause))
		default:
			return true
		}
		return false
	}
	if d.timeout > 0 && mid && stalledFor >= d.timeout {
		d.cut(ic, fmt.Errorf("%w: %w: no bytes from %s for %v in the middle of a message",
			ipl.ErrConnectionLost, ipl.ErrStalled, ic.from, stalledFor.Round(time.Millisecond)))
	}
	return false
}

// drained reports whether a dead member's connection has given its reader everything
// that arrived: the reader waits for more, it waited with the same progress at the
// previous look too, and the kernel holds nothing unread for the connection (where the
// transport can tell). A reader that a program holds (a message not yet taken or
// finished) does not wait, so its connection is not drained.
func (d *watchdog) drained(ic *inConn, progress uint64, waiting bool) bool {
	w := ic.watch
	if via := ic.delivery(); via != nil && via.Holds() {
		waiting = false // whole messages wait in the connection's buffers: they go first
	}
	twice := waiting && w.idle && w.idleAt == progress
	w.idle, w.idleAt = waiting, progress
	if !twice {
		return false
	}
	if pc, ok := ic.c.(PendingCounter); ok {
		if n, known := pc.Pending(); known && n > 0 {
			w.idle = false // bytes arrived: they must be read, then two looks again
			return false
		}
	}
	return true
}

// cut ends a stalled connection: its reader (if any) gets why, the sender sees the
// connection end.
func (d *watchdog) cut(ic *inConn, why error) {
	if !errors.Is(why, ipl.ErrConnectionLost) {
		why = fmt.Errorf("%w: %w", ipl.ErrConnectionLost, why)
	}
	if !ic.watch.cut.CompareAndSwap(nil, &why) {
		return
	}
	d.in.log.Warn("cutting a stalled connection", zap.Stringer("from", ic.from), zap.Error(why))
	d.remove(ic)
	// The notice goes first, while the connection is whole (a delivery's Cut may
	// retire and close it). The sender closes its end when it reads the notice; that end
	// reaches the reader as why, not as the socket's end: the guard of a stream and
	// a transport's Source (Acceptance.CutErr) give the watchdog's reason once it is set.
	if cn, ok := ic.c.(CutNotifier); ok {
		cn.NotifyCut(cutNotice(ic.taken.Load()))
	}
	if via := ic.delivery(); via != nil {
		via.Cut(why)
	}
	_ = ic.c.Close()
}

// waiting reports whether the connection's reader waits for bytes that do not come,
// and whether it waits inside a message, as its Delivery answers.
func (ic *inConn) waiting() (waiting, mid bool) {
	if via := ic.delivery(); via != nil {
		return via.Waiting()
	}
	return false, false // not handed over yet: nobody reads it
}
