package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/rawnet"
	"github.com/ibisgo/ibis/ipl"
)

// maxWorkersPerProcess bounds what one opWorkers request may start.
const maxWorkersPerProcess = 1024

// handleWorkers runs this process's workers until the master tells them to quit,
// then answers with "" or what went wrong.
func handleWorkers(ctx context.Context, s *peerService, m ipl.ReadMessage) error {
	var a mwArgs
	err := m.ReadObject(&a)
	if _, ferr := m.Finish(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	if a.PerProc < 1 || a.PerProc > maxWorkersPerProcess || a.Procs < 1 || a.Process < 0 || a.Process >= a.Procs || a.Size != a.Procs*a.PerProc+1 {
		return fmt.Errorf("%w: bad worker arguments %+v", errNotAnswer, a)
	}
	var wg sync.WaitGroup
	errs := make([]error, a.PerProc)
	for j := range a.PerProc {
		idx := a.Process + j*a.Procs // spread: worker i lives in process i mod procs
		wg.Go(func() { errs[j] = runWorker(ctx, s.e, a, idx) })
	}
	wg.Wait()
	msg := ""
	if err := errors.Join(errs...); err != nil {
		msg = err.Error()
	}
	return s.answer(ctx, func(w ipl.WriteMessage) error { return w.WriteString(msg) })
}

// runWorker is one worker: its own Ibis instance in the experiment's sub-pool.
func runWorker(ctx context.Context, e *env, a mwArgs, idx int) error {
	opts := []ipl.Option{ipl.WithRegistry(a.Registry), ipl.WithPool(a.Pool), ipl.WithPoolSize(a.Size),
		ipl.WithPortTypes(mwReqType, mwRepType), ipl.WithTag(fmt.Sprintf("worker-%d", idx)), ipl.WithLogger(e.Log)}
	ib, err := ipl.New(ctx, append(opts, implOptions(e)...)...)
	if err != nil {
		return fmt.Errorf("worker %d: %w", idx, err)
	}
	defer ib.Close()
	w := &worker{idx: idx, rawAddr: a.RawAddr}
	defer w.closeRaw()
	if w.in, err = ib.CreateReceivePort(ctx, mwRepType, mwReplyPort); err != nil {
		return err
	}
	if w.out, err = ib.CreateSendPort(mwReqType, "mw-req"); err != nil {
		return err
	}
	if err := w.out.ConnectGlobal(ctx, mwRequestPort); err != nil {
		return fmt.Errorf("worker %d: connecting to the master: %w", idx, err)
	}
	if a.Concurrent {
		if w.outCC, err = ib.CreateSendPort(mwReqType, "mw-req-concurrent"); err != nil {
			return err
		}
		if err := w.outCC.ConnectGlobal(ctx, mwConcurrentPort); err != nil {
			return fmt.Errorf("worker %d: connecting to the master's concurrent port: %w", idx, err)
		}
	}
	if err := w.request(ctx, mwHello); err != nil {
		return err
	}
	if err := w.loop(ctx); err != nil {
		return fmt.Errorf("worker %d: %w", idx, err)
	}
	return nil
}

type worker struct {
	idx     int
	in      ipl.ReceivePort
	out     ipl.SendPort // to the master's port of the explicit and upcall variants
	outCC   ipl.SendPort // to its port of the concurrent variant, nil without one
	rawAddr string
	raw     *rawnet.Conn
	answer  mwAnswer
}

func (w *worker) request(ctx context.Context, kind byte) error { return w.requestOn(ctx, w.out, kind) }

func (w *worker) requestOn(ctx context.Context, out ipl.SendPort, kind byte) error {
	m, err := out.NewMessage(ctx)
	if err != nil {
		return err
	}
	err = m.WriteByte(kind)
	if err == nil {
		err = m.WriteObject(&mwRequestObj{Worker: int32(w.idx)})
	}
	if _, ferr := m.Finish(); err == nil {
		err = ferr
	}
	return err
}

// loop waits for the master's commands until quit.
func (w *worker) loop(ctx context.Context) error {
	for {
		m, err := w.in.Receive(ctx)
		if err != nil {
			return err
		}
		kind, err := m.ReadByte()
		var raw bool
		var v byte
		var warm, d int64
		if err == nil && kind == mwGo {
			raw, err = m.ReadBool()
			if err == nil {
				v, err = m.ReadByte()
			}
			if err == nil {
				warm, err = m.ReadInt64()
			}
			if err == nil {
				d, err = m.ReadInt64()
			}
		}
		if _, ferr := m.Finish(); err == nil {
			err = ferr
		}
		if err != nil {
			return err
		}
		switch {
		case kind == mwQuit:
			return nil
		case kind == mwGo && raw:
			err = w.rawPhase(ctx, time.Duration(warm), time.Duration(d))
		case kind == mwGo:
			out := w.out
			if mwVariant(v) == mwConcurrent {
				out = w.outCC
			}
			if out == nil {
				err = fmt.Errorf("%w: a phase of the %s variant, which the master did not announce", errNotAnswer, mwVariant(v))
				break
			}
			err = w.phase(ctx, out)
		default:
			err = fmt.Errorf("%w: kind %d while idle", errNotAnswer, kind)
		}
		if err != nil {
			return err
		}
	}
}

// phase sends requests on out and reads answers until the master says stop.
func (w *worker) phase(ctx context.Context, out ipl.SendPort) error {
	for {
		if err := w.requestOn(ctx, out, mwRequest); err != nil {
			return err
		}
		m, err := w.in.Receive(ctx)
		if err != nil {
			return err
		}
		kind, err := m.ReadByte()
		if err == nil && kind == mwData {
			err = m.ReadObject(&w.answer)
		}
		if _, ferr := m.Finish(); err == nil {
			err = ferr
		}
		if err != nil {
			return err
		}
		switch kind {
		case mwData:
		case mwStop:
			return nil
		default:
			return fmt.Errorf("%w: kind %d during a phase", errNotAnswer, kind)
		}
	}
}

// rawPhase does the same exchange over a raw socket for warm+d and reports the
// requests done in the last d.
func (w *worker) rawPhase(ctx context.Context, warm, d time.Duration) error {
	if w.rawAddr == "" {
		return fmt.Errorf("%w: a raw phase without a raw server", errNotAnswer)
	}
	if w.raw == nil {
		c, err := rawnet.Dial(w.rawAddr)
		if err != nil {
			return err
		}
		w.raw = c
	}
	req := []byte{byte(w.idx), byte(w.idx >> 8), 0, 0}
	start := time.Now()
	from, to := start.Add(warm), start.Add(warm+d)
	var n int64
	var last time.Time
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := w.raw.RoundTrip(req, mwRawReply); err != nil {
			return err
		}
		now := time.Now()
		if now.After(to) {
			break
		}
		if now.After(from) {
			n++
			last = now
		}
	}
	ns := max(last.Sub(from).Nanoseconds(), 1)
	m, err := w.out.NewMessage(ctx)
	if err != nil {
		return err
	}
	err = m.WriteByte(mwRawCount)
	if err == nil {
		err = m.WriteInt64(n)
	}
	if err == nil {
		err = m.WriteInt64(ns)
	}
	if _, ferr := m.Finish(); err == nil {
		err = ferr
	}
	return err
}

func (w *worker) closeRaw() {
	if w.raw != nil {
		_ = w.raw.Close()
	}
}
