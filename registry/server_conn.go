package registry

import (
	"bufio"
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
	// joined is set once a join succeeded on this connection; only the
	// reader goroutine (which handles the join) uses it.
	joined bool
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
		c.conn = tls.Server(conn, s.tls)
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		_ = conn.Close()
		return
	}
	if s.unjoined >= s.cfg.maxUnjoined {
		// Log when the limit is first hit, not for every refused
		// connection of a flood.
		first := !s.unjoinedFull
		s.unjoinedFull = true
		s.mu.Unlock()
		_ = conn.Close()
		if first {
			c.log.Warn("refusing connections: too many connections have not joined a pool",
				zap.Int("limit", s.cfg.maxUnjoined))
		} else {
			c.log.Debug("connection refused: too many connections have not joined a pool",
				zap.Int("limit", s.cfg.maxUnjoined))
		}
		return
	}
	s.unjoinedFull = false
	s.unjoined++
	s.conns[c] = struct{}{}
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
	joinBy := time.Now().Add(c.s.cfg.heartbeat * 3 / 2)
	err := c.authenticate(joinBy)
	if err == nil {
		err = c.readFrames(joinBy)
	}
	c.closeWith(err)
	c.teardown(err)
}

// readFrames reads, decodes and handles frames until the connection fails,
// the peer goes silent for 1.5 heartbeat intervals, a frame is invalid, or
// the connection has not joined by joinBy, 1.5 heartbeat intervals after it
// was accepted (the TLS handshake and the pool check count within that
// time; heartbeats and refused joins do not extend it).
func (c *serverConn) readFrames(joinBy time.Time) error {
	br := bufio.NewReaderSize(countingReader{c.conn, &c.s.bytesIn}, 4096)
	timeout := c.s.cfg.heartbeat * 3 / 2
	var buf []byte
	for {
		deadline := joinBy
		if c.joined {
			deadline = time.Now().Add(timeout)
		}
		if err := c.conn.SetReadDeadline(deadline); err != nil {
			return fmt.Errorf("set read deadline: %w", err)
		}
		body, err := readFrame(br, buf, c.s.cfg.maxFrameSize)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				if !c.joined {
					return fmt.Errorf("no join within %v (1.5 heartbeat intervals) of connecting: %w", timeout, err)
				}
				return fmt.Errorf("nothing received for %v (1.5 heartbeat intervals): %w", timeout, err)
			}
			return err
		}
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

// teardown runs once the reader has ended: the member (if any, and if it did
// not leave) is declared dead, and the writer is told to stop.
func (c *serverConn) teardown(readErr error) {
	reason := c.reason
	if reason == nil {
		reason = readErr
	}
	c.logClose(reason)
	s := c.s
	s.mu.Lock()
	delete(s.conns, c)
	if !c.joined {
		s.unjoined--
	}
	if m := c.member; m != nil && !m.gone && !s.closing {
		s.removeMember(m, Died)
	}
	s.mu.Unlock()
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
	writeTimeout := 4 * c.s.cfg.heartbeat
	var batch [][]byte
	for {
		sendPing := false
		select {
		case <-c.out.Wake():
		case <-ticker.C:
			sendPing = true
		case <-c.s.quit:
			return
		}
		var closed bool
		batch, closed = c.out.Take(batch[:0])
		if closed {
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
