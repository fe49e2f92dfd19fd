package registry

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"go.uber.org/zap"
)

// writeTimeoutBeforeJoin bounds a write before the server announced its
// heartbeat interval.
const writeTimeoutBeforeJoin = 4 * DefaultHeartbeatInterval

// readLoop reads frames from the server until the connection ends, then
// ends the client with ErrRegistryLost (unless it already ended) and lets
// the dispatcher deliver what was received.
func (c *Client) readLoop() {
	defer c.wg.Done()
	err := c.readFrames()
	c.finish(fmt.Errorf("%w: %w", ErrRegistryLost, err))
	c.queue.close()
}

func (c *Client) readFrames() error {
	br := bufio.NewReaderSize(c.conn, 4096)
	var buf []byte
	for {
		if t := time.Duration(c.readTimeout.Load()); t > 0 {
			if err := c.conn.SetReadDeadline(time.Now().Add(t)); err != nil {
				return fmt.Errorf("set read deadline: %w", err)
			}
		}
		body, err := readFrame(br, buf, DefaultMaxFrameSize)
		switch {
		case errors.Is(err, io.EOF):
			return fmt.Errorf("server closed the connection: %w", err)
		case errors.Is(err, os.ErrDeadlineExceeded):
			if t := time.Duration(c.readTimeout.Load()); t > 0 {
				return fmt.Errorf("nothing heard from the server for %v: %w", t, err)
			}
			return fmt.Errorf("no join reply from the server within %v: %w", c.cfg.joinTimeout, err)
		case err != nil:
			return err
		}
		buf = body
		m, err := decodeMessage(body)
		if err != nil {
			return err
		}
		switch m.Kind {
		case kindReply:
			c.deliver(m)
		case kindEvent:
			if m.Event == nil {
				return fmt.Errorf("%w: event message without an event", ErrProtocol)
			}
			c.applyEvent(*m.Event)
		case kindPing:
		default:
			return fmt.Errorf("%w: server sent a %s message, which only clients send", ErrProtocol, m.Kind)
		}
	}
}

// deliver hands a reply to the call waiting for it. A reply nobody waits
// for (its call gave up) is dropped.
func (c *Client) deliver(m *message) {
	c.mu.Lock()
	ch, ok := c.pending[m.ID]
	delete(c.pending, m.ID)
	c.mu.Unlock()
	if !ok {
		c.log.Debug("dropping reply to an abandoned request", zap.Uint64("id", m.ID))
		return
	}
	ch <- m // buffered, one reply per request
}

// applyEvent updates the membership and pool state, then queues the event
// for the application. State first, so that Members() and the Wait methods
// are never behind the events the application has seen.
func (c *Client) applyEvent(ev Event) {
	c.mu.Lock()
	switch ev.Type {
	case Joined:
		if !slices.Contains(c.members, ev.Member) {
			c.members = append(c.members, ev.Member)
		}
	case Left, Died:
		c.members = slices.DeleteFunc(c.members, func(m Identifier) bool { return m.ID == ev.Member.ID })
	case PoolClosed:
		if !c.closedPool {
			c.closedPool = true
			close(c.poolClosed)
		}
	case Terminated:
		if !c.terminated {
			c.terminated = true
			close(c.termCh)
		}
	}
	c.mu.Unlock()
	c.queue.push(ev)
}

// writeLoop writes request frames and, once joined, a heartbeat every half
// heartbeat interval.
func (c *Client) writeLoop() {
	defer c.wg.Done()
	bw := bufio.NewWriterSize(c.conn, 8<<10)
	beat, err := encodeFrame(&message{Kind: kindHeartbeat})
	if err != nil {
		c.finish(fmt.Errorf("%w: %w", ErrRegistryLost, err))
		return
	}
	var ticker *time.Ticker
	defer func() {
		if ticker != nil {
			ticker.Stop()
		}
	}()
	var tick <-chan time.Time
	writeTimeout := writeTimeoutBeforeJoin
	for {
		var frame []byte
		select {
		case frame = <-c.out:
		case <-c.cancels.wake:
		case period := <-c.startBeats:
			ticker = time.NewTicker(period)
			tick = ticker.C
			writeTimeout = 8 * period
			continue
		case <-tick:
			frame = beat
		case <-c.done:
			return
		}
		if err := c.conn.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
			c.finish(fmt.Errorf("%w: set write deadline: %w", ErrRegistryLost, err))
			return
		}
		if err := c.writeBatch(bw, frame); err != nil {
			c.finish(fmt.Errorf("%w: write: %w", ErrRegistryLost, err))
			return
		}
	}
}

// writeBatch writes frame (if any) and whatever else is queued, then
// flushes. Cancels are taken first and written last: a cancel is queued
// only after its request went into c.out, so once c.out has been drained
// every request a taken cancel refers to has been written before it.
func (c *Client) writeBatch(bw *bufio.Writer, frame []byte) error {
	cancels, _ := c.cancels.take(nil)
	for drained := false; !drained; {
		if frame != nil {
			if _, err := bw.Write(frame); err != nil {
				return err
			}
		}
		select {
		case frame = <-c.out:
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

// dispatch delivers queued events in order to the handler or the Events
// channel, which it closes when it ends.
func (c *Client) dispatch() {
	defer close(c.dispatchDone)
	defer close(c.events)
	h := c.cfg.handler
	for {
		ev, ok := c.queue.pop(c.stop)
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
