package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// errStalled ends the receive when no message has come for the -stall time.
var errStalled = errors.New("no message came for the -stall time")

// receive is the receiver's part: it opens the many-to-one port and takes messages,
// slowly if asked, until every send port's end has come (or the run fails or stalls),
// and returns the account of what came.
func receive(ctx context.Context, s *settings, ib ipl.Ibis, senders []int32, stderr io.Writer) (*result, error) {
	rp, err := ib.CreateReceivePort(ctx, loadType, loadPort, ipl.WithConnectionHandler(lostLogger{stderr}))
	if err != nil {
		return nil, err
	}
	defer rp.Close()
	rctx, cancel := context.WithCancelCause(ctx)
	var progress atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() { watchStall(rctx, cancel, &progress, s.stall) })
	if prefix := os.Getenv(envHeapProfile); prefix != "" {
		wg.Go(func() { heapProfiles(rctx, prefix) })
	}
	defer func() {
		cancel(nil)
		wg.Wait()
	}()

	c := consumer{s: s, t: newTracker(senders, s.ports, s.messages), buf: make([]int64, s.values), stderr: stderr}
	err = c.loop(rctx, rp, &progress)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(rctx), errStalled) {
		err = fmt.Errorf("stalled after %d messages (-stall %v): %v", c.t.received, s.stall, c.t.missing())
	}
	if short := c.t.shortEnds(); len(short) > 0 {
		err = errors.Join(err, fmt.Errorf("senders stopped early: %v", short))
	}
	return c.result(ib, s), err
}

// consumer is the receiving loop's state.
type consumer struct {
	s           *settings
	t           *tracker
	buf         []int64
	stderr      io.Writer
	first, last time.Time // the arrival of the first message and of the last
	bytes       int64     // message bytes received, headers included
	data        int64     // data messages taken
	slept       time.Duration
}

// loop takes messages until every end has come.
func (c *consumer) loop(ctx context.Context, rp ipl.ReceivePort, progress *atomic.Int64) error {
	for !c.t.done() {
		m, err := rp.Receive(ctx)
		if err != nil {
			return err
		}
		r, err := readMessage(m, c.buf)
		n, ferr := m.Finish()
		progress.Add(1)
		now := time.Now()
		if c.first.IsZero() {
			c.first = now
		}
		c.last = now
		c.bytes += n
		if err = errors.Join(err, ferr); err != nil {
			if ctx.Err() != nil || errors.Is(err, ipl.ErrClosed) {
				return err
			}
			// A damaged message or a broken connection: count it and go on, the
			// account of the other senders still matters.
			fmt.Fprintf(c.stderr, "ibis-load: receiver: message %d from %v: %v\n", c.t.received, r.key, err)
			c.t.received++
			c.t.corrupt++
			continue
		}
		if r.kind == kindEnd {
			if err := c.t.end(r.key, r.end); err != nil {
				fmt.Fprintf(c.stderr, "ibis-load: receiver: %v\n", err)
			}
			continue
		}
		c.t.data(r.key, r.seq, r.good)
		c.data++
		if c.s.consumeDelay > 0 && c.data%int64(c.s.consumeEvery) == 0 {
			c.consume(now)
		}
	}
	return nil
}

// consume is the slow consumer's pause after a message it took at now: a sleep, or a
// busy wait with -consume-spin.
func (c *consumer) consume(now time.Time) {
	if !c.s.consumeSpin {
		time.Sleep(c.s.consumeDelay)
	} else {
		for until := now.Add(c.s.consumeDelay); time.Now().Before(until); {
		}
	}
	c.slept += time.Since(now)
}

// watchStall cancels ctx with errStalled when progress has not moved for stall.
func watchStall(ctx context.Context, cancel context.CancelCauseFunc, progress *atomic.Int64, stall time.Duration) {
	tick := time.NewTicker(min(stall/4, time.Second))
	defer tick.Stop()
	last, since := progress.Load(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			if p := progress.Load(); p != last {
				last, since = p, now
			} else if now.Sub(since) >= stall {
				cancel(errStalled)
				return
			}
		}
	}
}

// lostLogger reports broken connections of the receive port on stderr.
type lostLogger struct{ w io.Writer }

// GotConnection accepts every sender.
func (lostLogger) GotConnection(ipl.ReceivePort, ipl.SendPortIdentifier) bool { return true }

// LostConnection reports a connection that broke (not one closed cleanly).
func (l lostLogger) LostConnection(_ ipl.ReceivePort, from ipl.SendPortIdentifier, err error) {
	if err != nil {
		fmt.Fprintf(l.w, "ibis-load: receiver: connection from %s lost: %v\n", from, err)
	}
}
