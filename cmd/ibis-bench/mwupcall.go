package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// mwVariant is how the master takes its requests.
type mwVariant byte

// The master variants (-master).
const (
	// mwExplicit: one goroutine calls Receive, reads the request, finishes it and answers.
	mwExplicit mwVariant = iota
	// mwUpcall: message upcalls, one dispatcher; the handler finishes the request
	// before it answers, so the port takes the next request while it answers.
	mwUpcall
	// mwConcurrent: a port with concurrent upcalls (one per worker); each handler
	// answers from its own goroutine, as the raw server's goroutine per connection does.
	mwConcurrent
)

var mwVariantNames = []string{"explicit", "upcall", "concurrent"}

func (v mwVariant) String() string {
	if int(v) < len(mwVariantNames) {
		return mwVariantNames[v]
	}
	return fmt.Sprintf("variant(%d)", byte(v))
}

// parseMasterVariants parses -master.
func parseMasterVariants(s string) ([]mwVariant, error) {
	var out []mwVariant
	for _, name := range parseList(s) {
		found := false
		for i, n := range mwVariantNames {
			if n == name {
				if !containsVariant(out, mwVariant(i)) {
					out = append(out, mwVariant(i))
				}
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("%w: -master: %q is not one of %v", errUsage, name, mwVariantNames)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: -master is empty", errUsage)
	}
	return out, nil
}

func containsVariant(vs []mwVariant, v mwVariant) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// mwPhase is what the upcalls of one measured phase share.
type mwPhase struct {
	ctx        context.Context
	k          int
	from, to   time.Time // the measuring window
	early      bool      // finish the request before answering
	mu         sync.Mutex
	count      int       // requests answered in the window
	last       time.Time // when the last of them was answered
	stopped    int       // workers told to stop
	err        error
	done       chan struct{} // closed when every worker stopped, or on the first error
	doneClosed bool
}

// finish ends the phase with err (nil: every worker stopped); the caller holds mu.
func (ph *mwPhase) finish(err error) {
	if ph.doneClosed {
		return
	}
	ph.err = err
	ph.doneClosed = true
	close(ph.done)
}

// upcallPhase is phase for the upcall variants: the port's handler answers until
// every one of the k workers was told to stop.
func (m *master) upcallPhase(ctx context.Context, k int, warm, d time.Duration, v mwVariant) (float64, error) {
	port := m.req
	if v == mwConcurrent {
		port = m.reqCC
	}
	if port == nil {
		return 0, fmt.Errorf("masterworker: the master has no port for the %s variant", v)
	}
	start := time.Now()
	ph := &mwPhase{ctx: ctx, k: k, from: start.Add(warm), to: start.Add(warm + d), early: v == mwUpcall,
		done: make(chan struct{})}
	m.cur.Store(ph)
	if err := port.EnableMessageUpcalls(); err != nil {
		return 0, err
	}
	defer port.DisableMessageUpcalls()
	if err := m.startPhase(ctx, k, warm, d, false, v); err != nil {
		return 0, err
	}
	select {
	case <-ph.done:
	case <-ctx.Done():
		return 0, context.Cause(ctx)
	}
	ph.mu.Lock()
	defer ph.mu.Unlock()
	if ph.err != nil {
		return 0, ph.err
	}
	if ph.count == 0 || !ph.last.After(ph.from) {
		return 0, errors.New("no request was answered in the measuring window (raise -duration)")
	}
	return float64(ph.count) / ph.last.Sub(ph.from).Seconds(), nil
}

// upcall is the message handler of the master's ports: it answers a request of the
// current phase.
func (m *master) upcall(msg ipl.ReadMessage) error {
	ph := m.cur.Load()
	if ph == nil {
		return fmt.Errorf("%w: a request outside a phase", errNotAnswer)
	}
	err := m.answerUpcall(ph, msg)
	if err != nil {
		ph.mu.Lock()
		ph.finish(err)
		ph.mu.Unlock()
	}
	return err
}

func (m *master) answerUpcall(ph *mwPhase, msg ipl.ReadMessage) error {
	var r mwRequestObj
	kind, err := msg.ReadByte()
	if err == nil {
		err = msg.ReadObject(&r)
	}
	if ph.early {
		if _, ferr := msg.Finish(); err == nil {
			err = ferr
		}
	}
	if err == nil && (kind != mwRequest || r.Worker < 0 || int(r.Worker) >= ph.k) {
		err = fmt.Errorf("%w: kind %d from worker %d during a phase of %d workers", errNotAnswer, kind, r.Worker, ph.k)
	}
	if err != nil {
		return err
	}
	now := time.Now()
	if now.After(ph.to) {
		if err := m.send(ph.ctx, int(r.Worker), func(w ipl.WriteMessage) error { return w.WriteByte(mwStop) }); err != nil {
			return err
		}
		ph.mu.Lock()
		ph.stopped++
		if ph.stopped == ph.k {
			ph.finish(nil)
		}
		ph.mu.Unlock()
		return nil
	}
	if err := m.send(ph.ctx, int(r.Worker), func(w ipl.WriteMessage) error {
		if err := w.WriteByte(mwData); err != nil {
			return err
		}
		return w.WriteObject(&m.answer)
	}); err != nil {
		return err
	}
	if now.After(ph.from) {
		done := time.Now()
		ph.mu.Lock()
		ph.count++
		if done.After(ph.last) {
			ph.last = done
		}
		ph.mu.Unlock()
	}
	return nil
}
