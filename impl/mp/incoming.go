//go:build mpi

package mp

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/impl/mp/internal/mpi"
	"github.com/ibisgo/ibis/ipl"
)

// The engine's handler: every matched message of the transport goes through here, run
// by whoever holds the engine's progress lock (the engine goroutine, or a goroutine
// waiting in Await for its own message; internal/mpi/progress.go), and is routed by
// its tag (see tags.go).

// incoming dispatches a matched message (under the engine's progress lock).
func (t *transport) incoming(l *mpi.Loop, m mpi.Message) {
	if m.Tag == tagRequest {
		buf := make([]byte, m.Size)
		l.Recv(m, buf, func(err error) {
			if err != nil {
				t.log.Warn("receiving a connection request", zap.Int("from", m.Src), zap.Error(err))
				return
			}
			t.gotRequest(l, m.Src, buf)
		})
		return
	}
	c, rev, ok := parseTag(m.Tag)
	if !ok {
		l.Discard(m)
		return
	}
	key := connKey(m.Src, c)
	if rev {
		t.fromAcceptor(l, m, key)
		return
	}
	s := t.inByKey[key]
	if m.Size == 0 {
		l.Recv(m, nil, nil)
		switch s {
		case nil: // a dial given up before its request was answered
			t.cancelled[key] = struct{}{}
		case tombstone:
			delete(t.inByKey, key)
		default:
			delete(t.inByKey, key)
			s.pushEOF()
		}
		return
	}
	if s == nil || s == tombstone {
		l.Discard(m)
		return
	}
	if m.Size >= recvDirectMin {
		if !s.push(&chunk{state: chunkDeferred, msg: m}) {
			l.Discard(m)
		}
		return
	}
	ch, ok := s.pushSmall(m.Size)
	if !ok {
		l.Discard(m)
		return
	}
	l.RecvTo(m, ch.data, ch)
}

// fromAcceptor handles a message on a connection's reverse tag (under the engine's
// progress lock): the handshake reply, then credit (credit.go), or the news (an empty
// message) that the acceptor dropped the connection.
func (t *transport) fromAcceptor(l *mpi.Loop, m mpi.Message, key uint64) {
	out := t.outByKey[key]
	if out == nil {
		l.Discard(m)
		return
	}
	if m.Size == 0 {
		l.Recv(m, nil, nil)
		delete(t.outByKey, key)
		out.gone(fmt.Errorf("%w: rank %d closed the connection", ipl.ErrConnectionLost, out.peer))
		return
	}
	buf := make([]byte, m.Size)
	if out.replied {
		l.Recv(m, buf, func(err error) {
			if err != nil {
				t.log.Warn("receiving credit", zap.Int("from", m.Src), zap.Error(err))
				return
			}
			out.gotCredit(buf)
		})
		return
	}
	out.replied = true
	l.Recv(m, buf, func(err error) {
		select {
		case out.reply <- replyMsg{buf, err}:
		default:
		}
	})
}

// A message left matched in MPI for a later read (recvDirectMin and up) must be larger
// than those the engine's poll receives itself (mpi.InlineMax): this does not compile
// otherwise.
const _ = uint(recvDirectMin - mpi.InlineMax - 1)
