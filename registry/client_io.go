package registry

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/fifo"
)

// writeTimeoutBeforeJoin bounds a write before the server announced its
// heartbeat interval.
const writeTimeoutBeforeJoin = 4 * DefaultHeartbeatInterval

// session is one connection of a client to a server: a reader goroutine
// that hands replies to their calls and events to the client, and a writer
// goroutine that sends requests and heartbeats. A client has one session
// while it is connected, and makes a new one for each attempt to rejoin a
// lost server. Its requests are answered on it or not at all: when it
// ends, the calls waiting on it fail with its error.
type session struct {
	c           *Client
	conn        net.Conn
	out         chan []byte         // frames for the writer
	cancels     *fifo.Queue[[]byte] // cancel frames for the writer; never blocks
	startBeats  chan time.Duration  // tells the writer the heartbeat period
	readTimeout atomic.Int64        // how long the server may be silent, ns; 0 until joined
	beat        atomic.Int64        // the heartbeat interval, ns; 0 until joined
	// clock measures the server's silence without this process's own
	// stalls (the writer's heartbeat ticks feed it).
	clock   stallClock
	pending map[uint64]chan *message
	// resumeID is the id of this session's resume request: the reply to it
	// makes the session the client's own again (see Client.restored).
	resumeID atomic.Uint64
	// epoch and restartable are what the server of a rejoin said; they
	// become the client's once the rejoin is complete, so that a rejoin
	// cut short is tried again as coming from the lost server's run.
	// Guarded by Client.mu.
	epoch       uint64
	restartable bool
	// front is the index of the client's front end this session is
	// connected to.
	front int
	// joinBy ends the wait for the join reply however busy the server
	// (start); read by the reader only.
	joinBy time.Time

	done    chan struct{}
	endOnce sync.Once
	err     error // why the session ended; set before done closes
}

func (c *Client) newSession(conn net.Conn) *session {
	return &session{
		c:          c,
		conn:       conn,
		out:        make(chan []byte, 16),
		cancels:    fifo.New[[]byte](),
		startBeats: make(chan time.Duration, 1),
		pending:    make(map[uint64]chan *message),
		clock:      newStallClock(),
		done:       make(chan struct{}),
	}
}

// start runs the session's goroutines. Until beginBeats announces the
// heartbeat interval, the server may be silent for the join reply timeout,
// counted again from every frame it sends before the reply (a front end
// busy with a storm of joins pings, and sends the Joined events of the
// members before), but no longer than joinPatience times that timeout from
// now: a server that stops answering, or that talks but never answers,
// makes the join fail with ErrRegistryLost.
func (s *session) start() {
	now := time.Now()
	s.joinBy = now.Add(joinPatience * s.c.cfg.joinTimeout)
	_ = s.conn.SetReadDeadline(now.Add(s.c.cfg.joinTimeout))
	s.c.wg.Add(2)
	go s.readLoop()
	go s.writeLoop()
}

// beginBeats switches the session to the heartbeat interval hb the server
// announced: heartbeats every hb/2, and the server taken for lost after
// lost of silence (serverLostAfter; it pings every hb/2).
func (s *session) beginBeats(hb, lost time.Duration) {
	s.beat.Store(int64(hb))
	s.readTimeout.Store(int64(lost))
	_ = s.conn.SetReadDeadline(time.Now().Add(lost))
	select {
	case s.startBeats <- hb / 2:
	default: // already started (a session is accepted once)
	}
}

// end ends the session once, recording why, and closes its connection,
// which ends its reader and writer.
func (s *session) end(err error) {
	s.endOnce.Do(func() {
		s.err = err
		close(s.done)
		_ = closeConn(s.conn)
	})
}

// readLoop reads frames from the server until the connection ends, then
// ends the session with ErrRegistryLost (unless it already ended); the
// client's supervisor takes it from there.
func (s *session) readLoop() {
	defer s.c.wg.Done()
	err := s.readFrames()
	s.end(fmt.Errorf("%w: %w", ErrRegistryLost, err))
}

func (s *session) readFrames() error {
	c := s.c
	br := bufio.NewReaderSize(s.conn, 4096)
	var buf []byte
	heard := s.clock.mark()
	first := true // no frame from the server read yet
	unreadable := func(err error) error {
		if first && errors.Is(err, ErrProtocol) {
			return s.notRegistry(err)
		}
		return err
	}
	for {
		if err := s.awaitFrame(br, heard); err != nil {
			return err
		}
		if t := time.Duration(s.readTimeout.Load()); t > 0 {
			// A frame has begun: the rest of it must come in time too.
			if err := s.conn.SetReadDeadline(time.Now().Add(t)); err != nil {
				return fmt.Errorf("set read deadline: %w", err)
			}
		}
		body, err := readFrame(br, buf, DefaultMaxFrameSize)
		switch {
		case errors.Is(err, io.EOF):
			return fmt.Errorf("server closed the connection: %w", err)
		case errors.Is(err, os.ErrDeadlineExceeded):
			return fmt.Errorf("a frame from the server began but did not end in time: %w", err)
		case err != nil:
			return unreadable(err)
		}
		heard = s.clock.mark()
		if s.readTimeout.Load() == 0 {
			// Not joined yet, and the server is there: wait again (start).
			next := time.Now().Add(s.c.cfg.joinTimeout)
			if next.After(s.joinBy) {
				next = s.joinBy
			}
			if err := s.conn.SetReadDeadline(next); err != nil {
				return fmt.Errorf("set read deadline: %w", err)
			}
		}
		buf = body
		m, err := decodeMessage(body)
		if err != nil {
			return unreadable(err)
		}
		first = false
		switch m.Kind {
		case kindReply:
			c.deliver(s, m)
		case kindEvent:
			if m.Event == nil {
				return fmt.Errorf("%w: event message without an event", ErrProtocol)
			}

			if c.applyEvent(*m.Event) {
				return fmt.Errorf("%w: the registry heard nothing from this process for its death timeout "+
					"(it was stopped, starved of CPU or cut off that long) and told the pool it died", ErrDeclaredDead)
			}
		case kindPing:
		default:
			return fmt.Errorf("%w: server sent a %s message, which only clients send", ErrProtocol, m.Kind)
		}
	}
}

// notRegistry explains err, a protocol error in the first frame the server
// sent: whatever answered at that address does not speak the registry
// protocol (the registry frames it would send are well-formed from the
// first), most likely an ibis-hub, which begins with the same pool check, or
// another service. A bad frame later on is the registry's own and stays
// unexplained. The error still wraps ErrProtocol.
func (s *session) notRegistry(err error) error {
	addr := "that address"
	if s.front < len(s.c.eps) {
		addr = s.c.eps[s.front].addr
	}
	return fmt.Errorf("the server at %s does not speak the registry protocol (is it an ibis-hub, or another service?): "+
		"the first frame it sent is unreadable: %w", addr, err)
}

// awaitFrame waits until the next frame from the server begins to arrive.
// Before the join reply the deadline set by start, and moved on by every
// frame, holds. Once joined,
// the server may be silent for the read timeout since it was last heard
// (heard), not counting time in which this process did not run (the
// session's stallClock); when that has passed, the deadline is not trusted
// at once: the reader takes whatever arrived meanwhile, waiting one
// heartbeat interval more for it (a running server pings every half
// interval). Only then is the server taken for lost.
func (s *session) awaitFrame(br *bufio.Reader, heard heardMark) error {
	drained := false
	for {
		lost := time.Duration(s.readTimeout.Load())
		if lost > 0 {
			wait := lost - s.clock.since(heard)
			if drained {
				wait = time.Duration(s.beat.Load())
			}
			if err := s.conn.SetReadDeadline(time.Now().Add(wait)); err != nil {
				return fmt.Errorf("set read deadline: %w", err)
			}
		}
		_, err := br.Peek(1)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, io.EOF):
			return fmt.Errorf("server closed the connection: %w", err)
		case !errors.Is(err, os.ErrDeadlineExceeded):
			return err
		case lost == 0 && s.readTimeout.Load() > 0:
			continue // joined while waiting: the server's silence is measured from now on
		case lost == 0 && !time.Now().Before(s.joinBy):
			return fmt.Errorf("no join reply from the server within %v of connecting: %w", joinPatience*s.c.cfg.joinTimeout, err)
		case lost == 0:
			return fmt.Errorf("no join reply from the server, nor a word from it, for %v: %w", s.c.cfg.joinTimeout, err)
		}
		silent := s.clock.since(heard)
		switch {
		case silent < lost:
			drained = false // this process did not run for part of the time: wait on
		case drained:
			return fmt.Errorf("nothing heard from the server for %v: %w", silent.Round(time.Millisecond), err)
		default:
			drained = true
		}
	}
}

// deliver hands a reply to the call waiting for it. A reply nobody waits
// for (its call gave up) is dropped. The reply to a resume makes the
// session the client's own before anything read after it is handled, so
// that RegistryRestored comes after the events the server sent before the
// reply and before those it sent after.
func (c *Client) deliver(s *session, m *message) {
	if id := s.resumeID.Load(); id != 0 && m.ID == id && m.Code == codeNone {
		c.restored(s)
	}
	c.mu.Lock()
	ch, ok := s.pending[m.ID]
	delete(s.pending, m.ID)
	c.mu.Unlock()
	if !ok {
		c.log.Debug("dropping reply to an abandoned request", zap.Uint64("id", m.ID))
		return
	}
	ch <- m // buffered, one reply per request
}

// applyEvent updates the membership and pool state, then queues the event
// for the application. State first, so that Members() and the Wait methods
// are never behind the events the application has seen. Events that
// repeat what the member already knows (a Joined of a member it lists, a
// Left or Died of one it does not, a second PoolClosed or Terminated) are
// not delivered: a server sends them only when it replays a pool's events
// to a member that rejoins it after a restart. The Died event of this very
// member, which the server sends it before it closes the connection of a
// member it declared dead, is not delivered either: applyEvent reports it,
// and the client ends with ErrDeclaredDead.
func (c *Client) applyEvent(ev Event) (declaredDead bool) {
	c.mu.Lock()
	if ev.Type == Died && c.id.ID != "" && ev.Member.ID == c.id.ID {
		c.mu.Unlock()
		return true
	}
	deliver := true
	// A member numbered above every number heard of cannot be listed yet;
	// new members come so, which spares each Joined event of a growing pool
	// a scan of the list (O(N) each, O(N²) per member for a pool of N).
	unheard := ev.Member.Number() > c.mem.maxNumber
	c.mem.lastSeq = max(c.mem.lastSeq, ev.Seq)
	c.mem.maxNumber = max(c.mem.maxNumber, ev.Member.Number())
	member := func(m Identifier) bool { return m.ID == ev.Member.ID }
	switch ev.Type {
	case Joined:
		c.mem.lastJoined = ev
		if !unheard && slices.ContainsFunc(c.members, member) {
			deliver = false
		} else {
			c.members = append(c.members, ev.Member)
		}
	case Left, Died:
		if slices.ContainsFunc(c.members, member) {
			c.members = slices.DeleteFunc(c.members, member)
		} else {
			deliver = false
		}
	case Elected:
		if c.id.ID != "" && ev.Member.ID == c.id.ID {
			c.mem.won[ev.Name] = struct{}{}
		}
	case PoolClosed:
		if c.closedPool {
			deliver = false
		} else {
			c.closedPool = true
			close(c.poolClosed)
		}
	case Terminated:
		if c.terminated {
			deliver = false
		} else {
			c.terminated = true
			c.terminator = ev.Member
			close(c.termCh)
		}
	}
	c.mu.Unlock()
	if deliver {
		c.queue.Push(ev)
	}
	return false
}

// writeLoop writes request frames and, once joined, a heartbeat every half
// heartbeat interval. It is the session's own goroutine and never runs
// program code (events go to the dispatcher, replies to buffered
// channels), so a busy program cannot hold its heartbeats back beyond the
// Go scheduler's preemption; a tick that comes more than a period late
// means the whole process did not run, which it notes in the session's
// stallClock for the reader.
func (s *session) writeLoop() {
	defer s.c.wg.Done()
	bw := bufio.NewWriterSize(s.conn, 8<<10)
	beat, err := encodeFrame(&message{Kind: kindHeartbeat})
	if err != nil {
		s.end(fmt.Errorf("%w: %w", ErrRegistryLost, err))
		return
	}
	var ticker *time.Ticker
	defer func() {
		if ticker != nil {
			ticker.Stop()
		}
	}()
	var tick <-chan time.Time
	var period, lastTick time.Duration
	writeTimeout := writeTimeoutBeforeJoin
	for {
		var frame []byte
		select {
		case frame = <-s.out:
		case <-s.cancels.Wake():
		case p := <-s.startBeats:
			period = p
			ticker = time.NewTicker(period)
			tick = ticker.C
			// A server that does not read (it may be stopped) is given as
			// long as a silent one (readTimeout).
			writeTimeout = max(8*period, time.Duration(s.readTimeout.Load()))
			lastTick = s.clock.now()
			continue
		case <-tick:
			frame = beat
			// A late tick means this process did not run for a while:
			// the reader must not blame the server for that time.
			now := s.clock.now()
			s.clock.tick(now-lastTick, period)
			lastTick = now
		case <-s.done:
			return
		}
		if err := s.conn.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
			s.end(fmt.Errorf("%w: set write deadline: %w", ErrRegistryLost, err))
			return
		}
		if err := s.writeBatch(bw, frame); err != nil {
			s.end(fmt.Errorf("%w: write: %w", ErrRegistryLost, err))
			return
		}
	}
}

// writeBatch writes frame (if any) and whatever else is queued, then
// flushes. Cancels are taken first and written last: a cancel is queued
// only after its request went into s.out, so once s.out has been drained
// every request a taken cancel refers to has been written before it.
func (s *session) writeBatch(bw *bufio.Writer, frame []byte) error {
	cancels, _ := s.cancels.Take(nil)
	for drained := false; !drained; {
		if frame != nil {
			if _, err := bw.Write(frame); err != nil {
				return err
			}
		}
		select {
		case frame = <-s.out:
		default:
			drained = true
		}
	}
	for _, f := range cancels {
		if _, err := bw.Write(f); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// cancel tells the server to forget waiting request id (best effort). It
// never blocks: the frame goes on a queue of its own that the writer
// drains, after the requests queued before it (see writeBatch), so the
// cancel cannot overtake its request. The server must get it: it would
// otherwise keep the request parked, counting towards this member's
// limits, until the member leaves.
func (s *session) cancel(id uint64) {
	frame, err := encodeFrame(&message{Kind: kindCancel, ID: id})
	if err != nil {
		return
	}
	s.cancels.Push(frame)
}

// dispatch delivers queued events in order to the handler or the Events
// channel, which it closes when it ends.
func (c *Client) dispatch() {
	defer close(c.dispatchDone)
	defer close(c.events)
	h := c.cfg.handler
	for {
		ev, ok := c.queue.Pop(c.stop)
		if !ok {
			return
		}
		if h != nil {
			c.inHandler.Store(true)
			h(ev)
			c.inHandler.Store(false)
			continue
		}
		select {
		case c.events <- ev:
		case <-c.stop:
			return
		}
	}
}
