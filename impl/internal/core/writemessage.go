package core

import (
	"errors"
	"fmt"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/serialization"
)

// writeMessage is the live message of a send port. A port has two, used in turn by its
// messages (SendPort.msgs), so that NewMessage allocates nothing and a message used
// after its Finish (a second Finish, a late write) is still refused until the next but
// one; ipl.WriteMessage says that a finished message must not be used.
type writeMessage struct {
	sp       *SendPort
	w        *serialization.Writer
	seq      int64
	finished bool
	lost     error // connections lost during this message, reported again by Finish
}

var _ ipl.WriteMessage = (*writeMessage)(nil)

func (m *writeMessage) finishedErr() error {
	return fmt.Errorf("message of %s: %w", m.sp.id, ipl.ErrMessageFinished)
}

// WriteArray appends a primitive slice or 2-D slice.
func (m *writeMessage) WriteArray(slice any) error {
	if m.finished {
		return m.finishedErr()
	}
	return writeError(m.w.WriteArray(slice))
}

// WriteObject appends any value (needs serialization.object).
func (m *writeMessage) WriteObject(v any) error {
	if m.finished {
		return m.finishedErr()
	}
	return writeError(m.w.WriteObject(v))
}

// Send pushes what was written so far to every connection. It reports connections
// lost on the way; the receivers still connected get the whole message.
func (m *writeMessage) Send() error {
	if m.finished {
		return m.finishedErr()
	}
	err := m.w.Flush()
	lost := m.sp.takeBroken()
	m.lost = errors.Join(m.lost, lost)
	if err == nil {
		err = lost
	}
	return m.sendError(err)
}

// Finish ends the message and frees the port for the next one. An error matching
// ipl.ErrConnectionLost means that some receivers did not get the message; the others
// did, whole.
func (m *writeMessage) Finish() (int64, error) {
	if m.finished {
		return 0, m.finishedErr()
	}
	m.finished = true
	n, err := m.w.Finish()
	m.sp.drain()
	lost := m.sp.takeBroken()
	if err == nil {
		// Sent whole to the receivers still connected (a loss is reported, not fatal).
		m.sp.stats.message(n)
		m.sp.countSent()
		err = errors.Join(m.lost, lost)
	}
	// Receivers that cut their connections since: what they threw away, of this
	// message or of earlier ones, is reported now.
	err = m.sendError(errors.Join(err, m.sp.takeCuts(nil)))
	// Nothing touches m once the port is free: a later NewMessage may reuse it.
	m.sp.release()
	return n, err
}

// Cancel ends the message without sending what was not sent, and frees the port: a
// message that sent no packet never reaches the receivers (on a numbered port the next
// message takes its number); one that did ends short there, and counts as handed over
// (its receivers take it as a message).
func (m *writeMessage) Cancel() error {
	if m.finished {
		return m.finishedErr()
	}
	m.finished = true
	reached := m.w.Reached()
	ended, err := m.w.Abandon()
	m.sp.drain()
	lost := m.sp.takeBroken()
	if err == nil {
		if ended {
			m.sp.countSent()
		}
		err = errors.Join(m.lost, lost)
	}
	if !reached && m.seq >= 0 && m.seq == m.sp.seq-1 {
		m.sp.seq-- // nobody saw its number: the next message has it, and numbers stay consecutive
	}
	err = m.sendError(errors.Join(err, m.sp.takeCuts(nil)))
	m.sp.release()
	return err
}

func (m *writeMessage) sendError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ipl.ErrConnectionLost) {
		return fmt.Errorf("message of %s: %w", m.sp.id, err)
	}
	return fmt.Errorf("message of %s: %w", m.sp.id, writeError(err))
}

// Bytes returns the bytes written so far.
func (m *writeMessage) Bytes() int64 { return m.w.Count() }

// SequenceNumber returns the message's number on a numbered port, or -1.
func (m *writeMessage) SequenceNumber() int64 { return m.seq }

// SendPort returns the message's port.
func (m *writeMessage) SendPort() ipl.SendPort { return m.sp }
