package dc

import (
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/wake"
	"github.com/ibisgo/ibis/ipl"
)

// dispatch drains the receive port until the runtime closes: it serves steal requests
// from the work queue's old end, puts stolen jobs in the inbox and results in their
// futures. It never runs a job itself, so a process busy in a long job still answers.
func (rt *Runtime) dispatch() {
	defer rt.wg.Done()
	for {
		m, err := rt.rp.Receive(rt.life)
		if err != nil {
			switch {
			case rt.life.Err() != nil:
			case errors.Is(err, ipl.ErrClosed):
				// The Ibis ended under the run (as watch sees it too, whichever
				// hears first): by the program, or by itself when declared dead.
				rt.cutOff(fmt.Errorf("the Ibis ended: %w", err))
			default:
				rt.end(fmt.Errorf("dc: receiving: %w", err))
			}
			return
		}
		if err := rt.handle(m); err != nil {
			// A message that breaks the protocol is dropped; the connection it came on
			// stays, and the run goes on (a lost job shows up at its owner).
			rt.log.Warn("dropped a message", zap.Stringer("from", m.Origin().Ibis), zap.Error(err))
		}
	}
}

// handle reads one message and acts on it.
func (rt *Runtime) handle(m ipl.ReadMessage) error {
	h, err := readHeader(m)
	if err != nil {
		_, _ = m.Finish()
		return err
	}
	switch h.typ {
	case msgSteal:
		if _, err := m.Finish(); err != nil {
			return err
		}
		rt.serveSteal(&h)
	case msgReply:
		var t *task
		var why error
		if h.job {
			t, why = receiveJob(m, &h)
		}
		_, err := m.Finish()
		if why != nil {
			// The giver counts the job as ours: tell it that it cannot be run here.
			rt.log.Warn("a stolen job cannot run here", zap.Stringer("owner", h.peer), zap.Error(why))
			lost := &task{from: &origin{owner: h.peer, stamp: h.stamp}}
			rt.wg.Go(func() { rt.sendFailure(lost, why.Error()) })
			t = nil
		}
		rt.answered(&h, t)
		return errors.Join(why, err)
	case msgResult:
		err := rt.gotResult(&h, m)
		_, ferr := m.Finish()
		return errors.Join(err, ferr)
	case msgDone:
		rt.mu.Lock()
		res := rt.rootRes
		rt.mu.Unlock()
		if res == nil {
			res = rt.doneBeforeRun(m.Origin().Ibis, h.fail != "")
		}
		var err error
		if h.fail == "" && res != nil {
			err = res.readResult(m)
		}
		_, ferr := m.Finish()
		switch {
		case h.fail != "" && h.flags&flagStopped != 0:
			rt.end(fmt.Errorf("%w: %s", ErrRunStopped, h.fail))
		case h.fail != "":
			rt.end(fmt.Errorf("%w: %s", ErrJobFailed, h.fail))
		case res == nil:
			rt.end(fmt.Errorf("%w: the run ended before this process ran", ErrRunEnded))
		case err != nil:
			rt.end(fmt.Errorf("dc: reading the result: %w", err))
		default:
			rt.end(nil)
		}
		return errors.Join(err, ferr)
	case msgProbe:
		_, err := m.Finish()
		return err
	case msgStats:
		var s Stats
		err := m.ReadObject(&s)
		_, ferr := m.Finish()
		if err == nil {
			rt.mu.Lock()
			rt.statsIn[m.Origin().Ibis.ID] = s
			rt.mu.Unlock()
			wake.Poke(rt.statsWake)
		}
		return errors.Join(err, ferr)
	}
	return nil
}

// receiveJob reads the job a steal reply carries.
func receiveJob(m reader, h *header) (*task, error) {
	k, ok := lookupKind(h.kind)
	if !ok {
		return nil, fmt.Errorf("%w: no kind of job named %q in this program", ErrMalformed, h.kind)
	}
	t, err := k.receive(m)
	if err != nil {
		return nil, err
	}
	t.from = &origin{owner: h.peer, stamp: h.stamp}
	return t, nil
}

// answered takes the answer to a steal request: a job goes to the inbox, the waiting
// worker (if any) hears whether there was one.
func (rt *Runtime) answered(h *header, t *task) {
	rt.mu.Lock()
	w := rt.waits[h.req]
	delete(rt.waits, h.req)
	if t != nil {
		rt.toInbox(t)
	}
	if w != nil && w.async {
		if t != nil {
			rt.wan.succeeded(time.Now())
			rt.asyncSteals.Add(1)
		} else {
			rt.wan.refused(time.Now(), true)
		}
	}
	rt.mu.Unlock()
	if w != nil && !w.async {
		w.ch <- stealAnswer{ok: t != nil, giver: h.peer}
	}
	if t != nil || (w != nil && w.async) {
		rt.poke()
	}
}

// gotResult puts a stolen child's result into its future and counts it as finished.
func (rt *Runtime) gotResult(h *header, m reader) error {
	rt.mu.Lock()
	g, ok := rt.outstanding[h.stamp]
	delete(rt.outstanding, h.stamp)
	rt.mu.Unlock()
	if !ok {
		return nil // run again here already: its thief was reported dead
	}
	t := g.t
	var err error
	if h.fail != "" {
		t.parent.failed = &h.fail
	} else if err = t.body.readResult(m); err != nil {
		why := fmt.Sprintf("the result of a %q job from %s: %v", t.body.kindOf().kindName(), g.thief, err)
		t.parent.failed = &why
	}
	t.parent.remoteDone.Add(1)
	rt.poke()
	return err
}

// serveSteal answers a steal request from the old end of the work queue. TRS passes a
// request it cannot serve on to the process this one last stole from.
func (rt *Runtime) serveSteal(h *header) {
	thief := h.peer
	var t *task
	if !rt.ending.Load() {
		t = rt.w.dq.steal()
	}
	if t == nil {
		if rt.o.algo == TRS && !rt.ending.Load() && rt.forward(h) {
			return
		}
		// "None" matters only while the thief waits for it (the steal timeout): a thief
		// that cannot take it then (gone, stopped) must not hold up this dispatcher, and
		// with it the end of the run, for a whole send timeout.
		_ = rt.sendWithin(thief, &header{typ: msgReply, req: h.req, peer: rt.self}, nil, rt.o.stealTimeout)
		return
	}
	rt.mu.Lock()
	rt.nextStamp++
	stamp := rt.nextStamp
	rt.outstanding[stamp] = given{t: t, thief: thief.ID}
	rt.mu.Unlock()
	rt.given.Add(1)
	reply := &header{typ: msgReply, req: h.req, peer: rt.self, job: true, kind: t.body.kindOf().kindName(), stamp: stamp}
	err := rt.send(thief, reply, t.body.writeArg)
	rt.mu.Lock()
	_, still := rt.outstanding[stamp]
	if err != nil && still || rt.dead[thief.ID] && still {
		// Not delivered, or the thief died before it was on the list: run it here.
		delete(rt.outstanding, stamp)
		rt.toInbox(t)
		rt.given.Add(-1)
	}
	rt.mu.Unlock()
	if err != nil {
		rt.log.Debug("a stolen job did not reach its thief", zap.Stringer("thief", thief), zap.Error(err))
		if errors.Is(err, ipl.ErrTooLarge) {
			// The thief is there but the job's argument is over its message limit
			// (nothing of the reply went out): say "none", so that it does not wait.
			_ = rt.sendWithin(thief, &header{typ: msgReply, req: h.req, peer: rt.self}, nil, rt.o.stealTimeout)
		}
		rt.poke()
	}
}

// forward passes a TRS steal request on to the process this one last stole from,
// unless that is the thief itself or the request has gone round the pool already.
func (rt *Runtime) forward(h *header) bool {
	rt.mu.Lock()
	next := rt.lastVictim
	limit := int32(len(rt.members))
	rt.mu.Unlock()
	if next.ID == "" || next.ID == h.peer.ID || next.ID == rt.self.ID || h.hops >= limit {
		return false
	}
	fw := *h
	fw.hops++
	if err := rt.sendWithin(next, &fw, nil, rt.o.stealTimeout); err != nil {
		return false
	}
	rt.forwarded.Add(1)
	return true
}

// sendResult returns a stolen job's result, or why it failed, to its owner.
func (rt *Runtime) sendResult(t *task, why string) {
	if why != "" {
		rt.sendFailure(t, why)
		return
	}
	h := &header{typ: msgResult, stamp: t.from.stamp}
	if err := rt.send(t.from.owner, h, t.body.writeResult); err != nil {
		// The owner died (it runs the job itself if it comes back; it never does) or
		// the result cannot be encoded: say so, if the owner is still there.
		rt.log.Warn("a result did not reach its owner", zap.Stringer("owner", t.from.owner), zap.Error(err))
		if rt.alive(t.from.owner.ID) && !errors.Is(err, errPeerGone) {
			rt.sendFailure(t, err.Error())
		}
	}
}

func (rt *Runtime) sendFailure(t *task, why string) {
	if len(why) > maxFailure {
		why = why[:maxFailure]
	}
	h := &header{typ: msgResult, stamp: t.from.stamp, fail: why}
	if err := rt.send(t.from.owner, h, nil); err != nil {
		rt.log.Warn("a failure did not reach its owner", zap.Stringer("owner", t.from.owner), zap.Error(err))
	}
}
