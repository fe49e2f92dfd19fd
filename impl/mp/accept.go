//go:build mpi

package mp

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/impl/mp/internal/mpi"
	"github.com/ibisgo/ibis/ipl"
)

// The accepting side of connections: handshake requests, replies, and the end of an
// accepted stream on this side.

// gotRequest starts deciding on a connection request (under the engine's progress lock).
func (t *transport) gotRequest(l *mpi.Loop, src int, buf []byte) {
	if len(buf) < 4 {
		t.log.Warn("dropping a connection request without a connection number", zap.Int("from", src))
		return
	}
	c := binary.BigEndian.Uint32(buf)
	key := connKey(src, c)
	if _, ok := t.cancelled[key]; ok {
		delete(t.cancelled, key)
		return
	}
	if !t.spawn(func() { t.serveRequest(src, c, buf[4:]) }) {
		t.sendReply(l, src, c, &core.Reply{Code: core.ReplyNoSuchPort, Detail: fmt.Sprintf("rank %d is closing", t.world.Rank)})
	}
}

func (t *transport) sendReply(l *mpi.Loop, dst int, c uint32, rep *core.Reply) {
	var b bytes.Buffer
	if err := core.WriteReply(&b, rep); err != nil {
		t.log.Warn("encoding a handshake reply", zap.Error(err))
		return
	}
	l.Send(dst, revTag(c), b.Bytes(), nil)
}

// serveRequest decides on a connection request and, when it is accepted, reads the
// connection until it ends (its own goroutine).
func (t *transport) serveRequest(src int, c uint32, frame []byte) {
	req, err := core.ReadRequest(bytes.NewReader(frame))
	if err != nil {
		t.log.Warn("dropping a bad connection request", zap.Int("from", src), zap.Error(err))
		t.eng.Do(func(l *mpi.Loop) {
			t.sendReply(l, src, c, &core.Reply{Code: core.ReplyNoSuchPort, Detail: "bad handshake request"})
		})
		return
	}
	s := newInStream(t, src, c)
	if !t.track(s, nil) {
		return
	}
	rep, acc := t.acc.Accept(req, s)
	res := make(chan bool, 1)
	ok := t.eng.Do(func(l *mpi.Loop) {
		if _, gaveUp := t.cancelled[s.key]; gaveUp {
			delete(t.cancelled, s.key)
			res <- false
			return
		}
		if acc != nil {
			t.inByKey[s.key] = s
		}
		t.sendReply(l, src, c, rep)
		res <- true
	})
	if !ok || !<-res || acc == nil {
		t.untrack(s, nil)
		if acc != nil {
			acc.Abort(fmt.Errorf("mp: the dialler at rank %d gave up: %w", src, ipl.ErrConnectionLost))
		}
		return
	}
	acc.ServeDirect(s)
	t.untrack(s, nil)
}

// streamClosed retires a stream closed on the accepting side.
func (t *transport) streamClosed(s *inStream, drop []mpi.Message) {
	t.untrack(s, nil)
	t.eng.Do(func(l *mpi.Loop) {
		if t.inByKey[s.key] == s {
			// The dialler has not ended the stream: tell it, and drop what still comes.
			t.inByKey[s.key] = tombstone
			l.Send(s.src, revTag(s.c), nil, nil)
		}
		for _, m := range drop {
			l.Discard(m)
		}
	})
}
