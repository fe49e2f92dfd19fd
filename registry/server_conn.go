package registry

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/fifo"
)

// serverConn is one client connection: a reader goroutine that decodes and
// handles requests, and a writer goroutine that sends queued frames (replies
// and events) and pings. Handling never blocks on the network: frames are
// queued, and a client that lets too much pile up is disconnected.
type serverConn struct {
	s      *Server
	conn   net.Conn
	log    *zap.Logger
	out    *fifo.Queue[[]byte]
	queued atomic.Int64 // bytes in out

	closeOnce sync.Once
	reason    error // why the connection was closed by us; set in closeOnce

	// authDone is closed when the TLS handshake and the pool check have
	// ended; authOK (written before) says whether the client passed. The
	// writer sends nothing before.
	authDone chan struct{}
	authOK   bool
	authPool string // the pool the check was for: the only one this connection may join
	// source is the client's IP address, for the limits per source.
	source string

	member *member // the member joined on this connection; guarded by s.mu
	// serial names the connection in ops (ownerRef); set before it runs.
	serial uint64
	// joined is set once a join succeeded on this connection.
	joined atomic.Bool
	// lastWords is set by the reader when the writer must send what is
	// queued before it closes the connection (teardown).
	lastWords atomic.Bool
}

func (s *Server) startConn(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	c := &serverConn{
		s:    s,
		conn: conn,
		log:  s.log.With(zap.String("remote", conn.RemoteAddr().String())),
		out:  fifo.New[[]byte](),

		authDone: make(chan struct{}),
		source:   sourceOf(conn),
	}
	if s.tls != nil {
		// No I/O yet: the reader runs the TLS handshake (authenticate).
		c.conn = tls.Server(&helloConn{Conn: conn}, s.tls)
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		_ = conn.Close()
		return
	}
	if reason := s.unjoinedLimit(c.source); reason != "" {
		// Log when a limit is first hit, not for every refused connection
		// of a flood; tell the client why while few others are being told.
		first := !s.unjoinedFull
		s.unjoinedFull = true
		tell := s.refusing < maxRefusing
		if tell {
			s.refusing++
			s.wg.Add(1)
		}
		s.mu.Unlock()
		if first {
			c.log.Warn("refusing connections: "+reason, zap.String("source", c.source))
		} else {
			c.log.Debug("connection refused: "+reason, zap.String("source", c.source))
		}
		if tell {
			go c.refuseBusy(reason)
		} else {
			_ = conn.Close()
		}
		return
	}
	s.unjoinedFull = false
	s.unjoined++
	s.unjoinedBy[c.source]++
	s.conns[c] = struct{}{}
	s.nextSerial++
	c.serial = s.nextSerial
	s.bySerial[c.serial] = c
	s.wg.Add(2)
	s.mu.Unlock()
	s.accepted.Add(1)
	c.log.Debug("connection accepted")
	go c.readLoop()
	go c.writeLoop()
}

// closeWith closes the connection, remembering the first reason given so
// that the reader (which then fails) can log the real cause.
func (c *serverConn) closeWith(reason error) {
	c.closeOnce.Do(func() {
		c.reason = reason
		_ = closeConn(c.conn)
	})
}

// send queues a frame for the writer. It must not block: it is called with
// s.mu held. A client that has too much unsent data is disconnected.
func (c *serverConn) send(frame []byte) {
	if c == nil {
		return // the member is not connected to this front end
	}
	if n := c.queued.Add(int64(len(frame))); n > int64(c.s.cfg.maxQueued) {
		c.closeWith(fmt.Errorf("client is not reading: %d bytes queued, more than the maximum of %d", n, c.s.cfg.maxQueued))
		return
	}
	if !c.out.Push(frame) {
		c.queued.Add(-int64(len(frame)))
	}
}

func (c *serverConn) readLoop() {
	defer c.s.wg.Done()
	joinBy := time.Now().Add(c.s.cfg.deathTimeout)
	err := c.authenticate(joinBy)
	if err == nil {
		err = c.readFrames(joinBy)
	}
	if errors.Is(err, errSilent) && c.joined.Load() {
		// Declared dead for its silence: the member may only be stopped,
		// so the writer tells it, then closes the connection.
		c.teardown(err, true)
		return
	}
	c.closeWith(err)
	c.teardown(err, false)
}

// errSilent ends a member's connection that sent nothing for the death
// timeout (see awaitFrame).
var errSilent = errors.New("declared dead: nothing heard from the member")

// readFrames reads, decodes and handles frames until the connection fails,
// the member is silent past the death timeout (awaitFrame), a frame is
// invalid, or the connection has not joined by joinBy, the death timeout
// after it was accepted (the TLS handshake and the pool check count within
// that time; heartbeats and refused joins do not extend it).
func (c *serverConn) readFrames(joinBy time.Time) error {
	br := bufio.NewReaderSize(countingReader{c.conn, &c.s.bytesIn}, 4096)
	var buf []byte
	heard := c.s.clock.mark()
	for {
		if err := c.awaitFrame(br, joinBy, heard); err != nil {
			return err
		}
		// A frame has begun: the rest of it must come within the death
		// timeout too.
		if err := c.conn.SetReadDeadline(time.Now().Add(c.s.cfg.deathTimeout)); err != nil {
			return fmt.Errorf("set read deadline: %w", err)
		}
		body, err := readFrame(br, buf, c.s.cfg.maxFrameSize)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return fmt.Errorf("%w: a frame began but did not end within %v: %w", errSilent, c.s.cfg.deathTimeout, err)
			}
			return err
		}
		heard = c.s.clock.mark()
		buf = body
		m, err := decodeMessage(body)
		if err != nil {
			return err
		}
		if err := c.handle(m); err != nil {
			return err
		}
	}
}

// awaitFrame waits until the next frame begins to arrive. A joined member
// may be silent for the death timeout since it was last heard (heard), not
// counting time in which the server itself did not run (its stallClock).
// When that has passed, the deadline is not trusted at once: the server
// reads whatever arrived meanwhile, waiting one heartbeat interval more for
// it (a member that runs sends one every half interval). Only a member
// silent after all that is declared dead (errSilent). A connection that
// has not joined has until joinBy.
func (c *serverConn) awaitFrame(br *bufio.Reader, joinBy time.Time, heard heardMark) error {
	s := c.s
	drained := false
	for {
		deadline := joinBy
		if c.joined.Load() {
			wait := s.cfg.deathTimeout - s.clock.since(heard)
			if drained {
				wait = s.cfg.heartbeat
			}
			deadline = time.Now().Add(wait)
		}
		if err := c.conn.SetReadDeadline(deadline); err != nil {
			return fmt.Errorf("set read deadline: %w", err)
		}
		_, err := br.Peek(1)
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, os.ErrDeadlineExceeded):
			return err
		case !c.joined.Load():
			return fmt.Errorf("no join within %v (the death timeout) of connecting: %w", s.cfg.deathTimeout, err)
		}
		silent := s.clock.since(heard)
		switch {
		case silent < s.cfg.deathTimeout:
			drained = false // the server did not run for part of the time: wait on
		case drained:
			return fmt.Errorf("%w for %v (the death timeout), nor within a heartbeat interval after that: %w",
				errSilent, silent.Round(time.Millisecond), err)
		default:
			drained = true
		}
	}
}

// teardown runs once the reader has ended: the member (if any, and if it did
// not leave) is declared dead, and the writer is told to stop. With tell,
// the member is sent its own Died event first, which the writer delivers
// before it closes the connection: a member declared dead for its silence
// may only have been stopped, and learns it when it runs again.
func (c *serverConn) teardown(readErr error, tell bool) {
	reason := c.reason
	if reason == nil {
		reason = readErr
	}
	c.logClose(reason)
	s := c.s
	s.mu.Lock()
	delete(s.conns, c)
	delete(s.bySerial, c.serial)
	if !c.joined.Load() {
		s.unjoinedGone(c.source)
	}
	var died *op
	if m := c.member; m != nil && !m.gone && !s.closing {
		id := m.id
		died = &op{kind: opDied, front: m.owner.front, conn: m.owner.conn, req: &message{Kind: kindLeave, Member: &id}, local: c}
		if tell {
			died.req.Flags |= flagTell
		}
	}
	s.mu.Unlock()
	if died != nil {
		if s.store.shared() && tell {
			// The death is applied later; tell the member now.
			ev := Event{Type: Died, Member: *died.req.Member}
			if frame, err := encodeFrame(&message{Kind: kindEvent, Event: &ev}); err == nil {
				c.send(frame)
			}
		}
		ctx, cancel := context.WithTimeout(s.life, s.cfg.deathTimeout)
		if err := s.store.submit(ctx, died); err != nil {
			c.log.Warn("cannot record the member's death in the store", zap.Error(err))
		}
		cancel()
	}
	if tell {
		c.lastWords.Store(true)
	}
	c.out.Close()
}

func (c *serverConn) logClose(reason error) {
	var m Identifier
	c.s.mu.Lock()
	if c.member != nil {
		m = c.member.id
	}
	c.s.mu.Unlock()
	fields := []zap.Field{zap.Error(reason)}
	if !m.IsZero() {
		fields = append(fields, zap.Stringer("member", m))
	}
	switch {
	case errors.Is(reason, io.EOF), errors.Is(reason, ErrClosed), errors.Is(reason, errRefused):
		c.log.Debug("connection closed", fields...)
	case errors.Is(reason, ErrProtocol):
		c.log.Warn("closing connection: protocol error", fields...)
	default:
		c.log.Info("connection closed", fields...)
	}
}

// writeLoop sends queued frames, and a ping every half heartbeat interval
// so the client can tell a silent server from a dead one. It starts once
// the client has passed the pool check.
func (c *serverConn) writeLoop() {
	defer c.s.wg.Done()
	select {
	case <-c.authDone:
		if !c.authOK {
			return
		}
	case <-c.s.quit:
		c.closeWith(fmt.Errorf("server closing: %w", ErrClosed))
		return
	}
	bw := bufio.NewWriterSize(countingWriter{c.conn, &c.s.bytesOut}, 16<<10)
	ping, err := encodeFrame(&message{Kind: kindPing})
	if err != nil {
		c.closeWith(err)
		return
	}
	ticker := time.NewTicker(c.s.cfg.heartbeat / 2)
	defer ticker.Stop()
	// A member that does not read (it may be stopped) is given the death
	// timeout, like one that does not write; what waits meanwhile is
	// bounded by WithMaxQueuedBytes.
	writeTimeout := max(4*c.s.cfg.heartbeat, c.s.cfg.deathTimeout)
	var batch [][]byte
	for {
		sendPing := false
		select {
		case <-c.out.Wake():
		case <-ticker.C:
			sendPing = true
		case <-c.s.quit:
			c.closeWith(fmt.Errorf("server closing: %w", ErrClosed))
			return
		}
		var closed bool
		batch, closed = c.out.Take(batch[:0])
		if closed {
			c.lastFrames(bw, batch)
			return
		}
		if sendPing {
			batch = append(batch, ping)
		}
		if len(batch) == 0 {
			continue
		}
		if err := c.conn.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
			c.closeWith(fmt.Errorf("set write deadline: %w", err))
			return
		}
		for _, f := range batch {
			if _, err := bw.Write(f); err != nil {
				c.closeWith(fmt.Errorf("write: %w", err))
				return
			}
		}
		if err := bw.Flush(); err != nil {
			c.closeWith(fmt.Errorf("write: %w", err))
			return
		}
		var n int64
		for i, f := range batch {
			if !sendPing || i != len(batch)-1 {
				n += int64(len(f))
			}
			batch[i] = nil
		}
		c.queued.Add(-n)
	}
}

// lastFrames ends the writer of a connection whose reader has ended. When
// the reader left last words (a member declared dead is told so), the
// frames still queued are written, within a heartbeat interval, before the
// writer closes the connection; otherwise the connection is closed already
// and they are dropped.
func (c *serverConn) lastFrames(bw *bufio.Writer, batch [][]byte) {
	if !c.lastWords.Load() {
		return
	}
	defer c.closeWith(fmt.Errorf("%w: connection closed after telling the member", errSilent))
	if err := c.conn.SetWriteDeadline(time.Now().Add(c.s.cfg.heartbeat)); err != nil {
		return
	}
	for _, f := range batch {
		if _, err := bw.Write(f); err != nil {
			return
		}
	}
	_ = bw.Flush()
}

// countingReader and countingWriter feed the byte counters of Stats.
type countingReader struct {
	r io.Reader
	n *atomic.Uint64
}

func (cr countingReader) Read(p []byte) (int, error) {
	n, err := cr.r.Read(p)
	cr.n.Add(uint64(n))
	return n, err
}

type countingWriter struct {
	w io.Writer
	n *atomic.Uint64
}

func (cw countingWriter) Write(p []byte) (int, error) {
	n, err := cw.w.Write(p)
	cw.n.Add(uint64(n))
	return n, err
}
