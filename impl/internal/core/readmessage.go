package core

import (
	"fmt"
	"sync"

	"github.com/ibisgo/ibis/ipl"
)

// readMessage is the live message of a receive port. A direct connection reuses two
// in turn (deliver_direct.go); its port has no upcalls, and Finish touches no such
// message once it has freed the port, since the next Receive may reuse it.
//
// Locks: mu guards finished and the upcall hand-off; it is never held while the
// message's bytes are read or its connection is handed back. A direct message (no
// upcall can touch it: only the program's goroutine uses it) is finished without it.
type readMessage struct {
	port *ReceivePort
	ic   *inConn
	via  Delivery // ic's delivery, which Finish hands the message back to
	seq  int64
	// direct: read by a Receive on a direct connection, whose port has no upcalls.
	direct bool

	mu        sync.Mutex
	finished  bool
	fatal     error // the stream broke while reading: the connection must go
	whole     bool  // taken by a Receive or a Poll: it holds all the token's slots
	inUpcall  bool  // a handler is running with this message
	handedOff bool  // finished inside its upcall: another dispatcher took over
	stop      chan struct{}
}

var _ ipl.ReadMessage = (*readMessage)(nil)

func (m *readMessage) finishedErr() error {
	return fmt.Errorf("message from %s: %w", m.ic.from, ipl.ErrMessageFinished)
}

// fail maps a read error and remembers when it broke the stream.
func (m *readMessage) fail(err error) error {
	mapped, fatal := streamError(err)
	if fatal && m.fatal == nil {
		m.fatal = err
	}
	return fmt.Errorf("message from %s at %s: %w%s", m.ic.from, m.port.id, mapped, m.ic.note)
}

// ReadArray fills dst from the message.
func (m *readMessage) ReadArray(dst any) error {
	if m.finished {
		return m.finishedErr()
	}
	if err := m.ic.rd.ReadArray(dst); err != nil {
		return m.fail(err)
	}
	return nil
}

// ReadObject decodes the next object into ptr.
func (m *readMessage) ReadObject(ptr any) error {
	if m.finished {
		return m.finishedErr()
	}
	if err := m.ic.rd.ReadObject(ptr); err != nil {
		return m.fail(err)
	}
	return nil
}

// Finish skips what was not read and frees the port.
func (m *readMessage) Finish() (int64, error) {
	if !m.markFinished() {
		return 0, m.finishedErr()
	}
	// The unread rest is skipped without the lock: it may wait for the sender's bytes.
	var err error
	if m.fatal == nil {
		if ferr := m.ic.rd.Finish(); ferr != nil {
			err = m.fail(ferr)
			m.fatal = ferr
		}
	} else {
		err = fmt.Errorf("message from %s: %w: %w%s", m.ic.from, ipl.ErrConnectionLost, m.fatal, m.ic.note)
	}
	n := m.ic.rd.Count()
	if err == nil {
		m.port.stats.message(n)
		m.ic.taken.Add(1)
	}
	handOff := m.handingOff()
	m.via.Finished(m.fatal)
	m.port.release(m)
	if handOff {
		// Finished early inside its upcall: the port moves on without waiting for the
		// handler to return, on a new dispatcher.
		m.port.startDispatcher(m.stop)
	}
	return n, err
}

// markFinished marks the message finished; false when it already was.
func (m *readMessage) markFinished() bool {
	if !m.direct {
		m.mu.Lock()
		defer m.mu.Unlock()
	}
	if m.finished {
		return false
	}
	m.finished = true
	return true
}

// handingOff reports whether the message is finished inside its upcall, and records
// that a new dispatcher takes the port over.
func (m *readMessage) handingOff() bool {
	if m.direct {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.handedOff = m.inUpcall
	return m.inUpcall
}

// Bytes returns the bytes consumed so far.
func (m *readMessage) Bytes() int64 { return m.ic.rd.Count() }

// Origin names the sender.
func (m *readMessage) Origin() ipl.SendPortIdentifier { return m.ic.from }

// SequenceNumber returns the sender's number for the message, or -1.
func (m *readMessage) SequenceNumber() int64 { return m.seq }

// ReceivePort returns the delivering port.
func (m *readMessage) ReceivePort() ipl.ReceivePort { return m.port }
