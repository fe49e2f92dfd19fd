//go:build mpi

package mp

import (
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/ibisgo/ibis/impl/mp/internal/mpi"
	"github.com/ibisgo/ibis/internal/wake"
)

// inStream is the accepting side of a connection: the io.Reader that core's receive
// port reads (handed to Acceptance.Serve) and the InConn it closes. The engine appends
// the connection's MPI messages as chunks in the order it matched them. A small
// message is received at once into a buffer of its own; a large one is left matched
// but unreceived (deferred) until a Read asks for it, and then lands straight in the
// reader's memory when the read is big enough to hold it, which is how a large slice
// arrives without a copy. It also offers Peek and SetReadDeadline, so that one-to-one
// ports read it on the receiving goroutine itself (core's direct receipt).
type inStream struct {
	t   *transport
	src int
	c   uint32
	key uint64

	// mu guards what follows and the chunks' states. Lock order: mu is a leaf. The
	// engine's handler takes it (push, filled, pushEOF) under the progress lock, and
	// no one holds it while waiting for the engine or calling Do: recvInto,
	// giveCredit and streamClosed run without it.
	mu       sync.Mutex
	q        []*chunk
	off      int  // read offset into q[0]
	eof      bool // the dialler ended the stream; q holds the rest
	closed   bool // closed on this side
	deadline time.Time
	notify   chan struct{}
	// unreturned is credit consumed by the reader, not yet sent back (credit.go).
	unreturned int
	// spare holds chunks the reader has consumed, for the next small messages
	// (newChunk): a chunk and its buffer serve many messages.
	spare []*chunk
}

// chunkState is where one MPI message of a stream is, under the stream's mu:
//
//	chunkPending  --received-------> chunkReady | chunkFailed   (a small message, received at once)
//	chunkDeferred --a reader takes--> chunkTaken --received--> chunkReady | chunkFailed
//
// A large message starts deferred: it stays in MPI until a read receives it. A read
// that holds it receives it straight into the reader's memory and pops the chunk
// while it is still taken; a smaller read or a Peek makes it ready in a buffer of its
// own (materialize). Close drops the queue whatever the chunks' states.
type chunkState uint8

const (
	chunkPending  chunkState = iota // an MPI receive into data is in flight
	chunkReady                      // data holds the bytes
	chunkDeferred                   // matched, not yet received: msg
	chunkTaken                      // a reader is receiving it
	chunkFailed                     // the receive failed: err
)

type chunk struct {
	state  chunkState
	data   []byte
	msg    mpi.Message
	err    error
	credit int       // what the dialler paid for it (credit.go), given back once it is read
	s      *inStream // whose chunk it is, for Complete
}

// Complete marks the chunk's receive as done (mpi.Completion; under the engine's
// progress lock).
func (ch *chunk) Complete(err error) { ch.s.filled(ch, err) }

// Bounds of the chunks a stream keeps for reuse: how many, and the largest buffer.
const (
	spareChunks = 8
	spareBytes  = 4 << 10
)

// newChunk returns a chunk for a small message of n bytes, pending, a spare one if
// there is one; s.mu is held.
func (s *inStream) newChunk(n int) *chunk {
	var ch *chunk
	if k := len(s.spare); k > 0 {
		ch = s.spare[k-1]
		s.spare[k-1] = nil
		s.spare = s.spare[:k-1]
	} else {
		ch = &chunk{s: s}
	}
	if cap(ch.data) >= n {
		ch.data = ch.data[:n]
	} else {
		ch.data = make([]byte, n)
	}
	ch.state, ch.credit = chunkPending, charge(n)
	return ch
}

// recycle keeps a consumed chunk for newChunk; s.mu is held. The reader has copied its
// bytes out (a Peek's view of them lasts only until the next read, as bufio's).
func (s *inStream) recycle(ch *chunk) {
	if len(s.spare) >= spareChunks || cap(ch.data) > spareBytes || ch.s != s {
		return
	}
	*ch = chunk{s: s, data: ch.data[:0]}
	s.spare = append(s.spare, ch)
}

// errStreamClosed is what reads of a stream closed on this side return.
var errStreamClosed = fmt.Errorf("mp: connection closed: %w", net.ErrClosed)

func newInStream(t *transport, src int, c uint32) *inStream {
	return &inStream{t: t, src: src, c: c, key: connKey(src, c), notify: make(chan struct{}, 1)}
}

func (s *inStream) wake() {
	wake.Poke(s.notify)
}

// push appends a chunk unless the stream is closed (under the engine's progress lock).
func (s *inStream) push(ch *chunk) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.q = append(s.q, ch)
	s.mu.Unlock()
	s.wake()
	return true
}

// pushSmall appends a pending chunk for a small message of n bytes, unless the stream
// is closed (under the engine's progress lock).
func (s *inStream) pushSmall(n int) (*chunk, bool) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, false
	}
	ch := s.newChunk(n)
	s.q = append(s.q, ch)
	s.mu.Unlock()
	s.wake()
	return ch, true
}

// filled marks a pending chunk's receive as done (under the engine's progress lock).
func (s *inStream) filled(ch *chunk, err error) {
	s.mu.Lock()
	if err != nil {
		ch.state, ch.err = chunkFailed, err
	} else {
		ch.state = chunkReady
	}
	s.mu.Unlock()
	s.wake()
}

// pushEOF records the dialler's end of the stream (under the engine's progress lock).
func (s *inStream) pushEOF() {
	s.mu.Lock()
	s.eof = true
	s.mu.Unlock()
	s.wake()
}

// Read reads the stream; a deferred message goes straight into p when it fits.
func (s *inStream) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return 0, errStreamClosed
		}
		if len(s.q) > 0 {
			ch := s.q[0]
			switch ch.state {
			case chunkReady:
				n := copy(p, ch.data[s.off:])
				s.off += n
				give := 0
				if s.off == len(ch.data) {
					give = s.pop()
				}
				s.mu.Unlock()
				s.giveCredit(give)
				return n, nil
			case chunkFailed:
				s.mu.Unlock()
				return 0, ch.err
			case chunkDeferred:
				if size := ch.msg.Size; len(p) >= size {
					ch.state = chunkTaken
					s.mu.Unlock()
					err := s.t.recvInto(ch.msg, p[:size])
					s.mu.Lock()
					if err != nil {
						ch.state, ch.err = chunkFailed, err
						s.mu.Unlock()
						return 0, err
					}
					give := 0
					if len(s.q) > 0 && s.q[0] == ch { // not if Close emptied the queue meanwhile
						give = s.pop()
					}
					s.mu.Unlock()
					s.giveCredit(give)
					return size, nil
				}
				s.mu.Unlock()
				if err := s.materialize(ch); err != nil {
					return 0, err
				}
				continue
			}
		} else if s.eof {
			s.mu.Unlock()
			return 0, io.EOF
		}
		dl := s.deadline
		s.mu.Unlock()
		if err := s.wait(dl); err != nil {
			return 0, err
		}
	}
}

// pop drops the consumed head chunk and returns the credit to give back now (see
// consumed); s.mu is held.
func (s *inStream) pop() int {
	ch := s.q[0]
	give := s.consumed(ch.credit)
	s.q[0] = nil
	if len(s.q) == 1 {
		s.q = s.q[:0] // the queue's array serves again from its start
	} else {
		s.q = s.q[1:]
	}
	s.off = 0
	if ch.state == chunkReady {
		s.recycle(ch)
	}
	return give
}

// materialize receives a deferred chunk into a buffer of its own; the caller does not
// hold s.mu and ch is deferred.
func (s *inStream) materialize(ch *chunk) error {
	s.mu.Lock()
	if ch.state != chunkDeferred {
		s.mu.Unlock()
		return nil
	}
	ch.state = chunkTaken
	msg := ch.msg
	s.mu.Unlock()
	buf := make([]byte, msg.Size)
	err := s.t.recvInto(msg, buf)
	s.mu.Lock()
	if err != nil {
		ch.state, ch.err = chunkFailed, err
	} else {
		ch.state, ch.data = chunkReady, buf
	}
	s.mu.Unlock()
	return err
}

// Peek returns the next n bytes without consuming them (for core's direct receipt,
// which peeks a packet header under a read deadline).
func (s *inStream) Peek(n int) ([]byte, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, errStreamClosed
		}
		// Make q[0] hold n bytes, merging ready chunks and fetching deferred ones.
		have := 0
		var fetch *chunk
		var blocked bool
		for i, ch := range s.q {
			if ch.state == chunkDeferred {
				fetch = ch
				break
			}
			if ch.state == chunkFailed && have < n {
				s.mu.Unlock()
				return nil, ch.err
			}
			if ch.state != chunkReady {
				blocked = true
				break
			}
			if i == 0 {
				have = len(ch.data) - s.off
			} else {
				have += len(ch.data)
			}
			if have >= n {
				if i > 0 {
					s.merge(i)
				}
				b := s.q[0].data[s.off : s.off+n]
				s.mu.Unlock()
				return b, nil
			}
		}
		if fetch != nil {
			s.mu.Unlock()
			if err := s.materialize(fetch); err != nil {
				return nil, err
			}
			continue
		}
		if !blocked && s.eof {
			var b []byte
			if len(s.q) > 0 {
				s.merge(len(s.q) - 1)
				b = s.q[0].data[s.off:]
			}
			s.mu.Unlock()
			return b, io.EOF
		}
		dl := s.deadline
		s.mu.Unlock()
		if err := s.wait(dl); err != nil {
			return nil, err
		}
	}
}

// merge joins the ready chunks q[0..i] into one; s.mu is held.
func (s *inStream) merge(i int) {
	var b []byte
	credit := 0
	for j := 0; j <= i; j++ {
		if j == 0 {
			b = append(b, s.q[0].data[s.off:]...)
		} else {
			b = append(b, s.q[j].data...)
		}
		credit += s.q[j].credit
		s.q[j] = nil
	}
	s.q = s.q[i:]
	s.q[0] = &chunk{state: chunkReady, data: b, credit: credit}
	s.off = 0
}

// wait blocks until the engine adds something, the deadline passes or the stream closes.
func (s *inStream) wait(dl time.Time) error {
	spin := s.t.waitSpin
	if !dl.IsZero() {
		spin = min(spin, time.Until(dl))
	}
	if s.t.eng.Await(s.notify, spin) {
		return nil
	}
	defer s.t.eng.Blocking()()
	if dl.IsZero() {
		<-s.notify
		return nil
	}
	d := time.Until(dl)
	if d <= 0 {
		return os.ErrDeadlineExceeded
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.notify:
	case <-t.C:
	}
	return nil
}

// SetReadDeadline bounds the current and later reads, like net.Conn's; a read cut
// short reports os.ErrDeadlineExceeded and consumes nothing.
func (s *inStream) SetReadDeadline(t time.Time) error {
	s.mu.Lock()
	s.deadline = t
	s.mu.Unlock()
	s.wake()
	return nil
}

// Close ends the connection on this side: reads fail, messages still matched for it
// are received and dropped so that the dialler's sends complete, and the dialler hears
// that the connection is gone.
func (s *inStream) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	var drop []mpi.Message
	for _, ch := range s.q {
		if ch.state == chunkDeferred {
			drop = append(drop, ch.msg)
		}
	}
	s.q = nil
	s.mu.Unlock()
	s.wake()
	s.t.streamClosed(s, drop)
	return nil
}
