package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/cluster"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/rawnet"
	"github.com/ibisgo/ibis/ipl"
)

// Port types of the master/worker experiment, in its own sub-pool: requests from
// every worker to the master's port (taken explicitly or as upcalls, per master
// variant), answers to each worker's own port.
var (
	mwReqType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationObject, ipl.ReceiveExplicit,
		ipl.ReceiveAutoUpcalls, ipl.CommunicationReliable, ipl.CommunicationFIFO)
	mwRepType = ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationObject, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO)
)

const (
	mwRequestPort = "mw-requests" // the master's port, published pool-wide
	// mwConcurrentPort is the master's port with concurrent upcalls, for the
	// concurrent variant (a port's concurrency is fixed when it is made).
	mwConcurrentPort = "mw-requests-concurrent"
	mwReplyPort      = "mw-reply" // each worker's port
	mwRawReply       = 30         // bytes of a raw answer: one of each primitive, packed
)

// Message kinds from workers to the master.
const (
	mwHello byte = iota + 1 // worker index follows (as a request object)
	mwRequest
	mwRawCount // requests done and nanoseconds taken in a raw phase
)

// Message kinds from the master to a worker.
const (
	mwData byte = iota + 1 // the answer object follows
	mwGo                   // raw flag, master variant, warm-up and measuring nanoseconds follow
	mwStop
	mwQuit
)

// mwRequestObj is what a worker sends: an object identifying itself.
type mwRequestObj struct {
	Worker int32
}

// mwAnswer is the master's answer: one value of each primitive type.
type mwAnswer struct {
	Bool    bool
	Int8    int8
	Uint16  uint16
	Int16   int16
	Int32   int32
	Int64   int64
	Float32 float32
	Float64 float64
}

// mwArgs tell a worker process which workers to run.
type mwArgs struct {
	Pool, Registry   string
	Size, Procs      int
	Process, PerProc int
	RawAddr          string
	Concurrent       bool // the master has a port with concurrent upcalls too
}

// master is the coordinator's side of the experiment.
type master struct {
	ib      ipl.Ibis
	req     ipl.ReceivePort // explicit and upcall variants
	reqCC   ipl.ReceivePort // concurrent variant, nil when not measured
	to      []ipl.SendPort
	links   []*link
	raw     *rawnet.Server
	answer  mwAnswer
	stopped bool
	cur     atomic.Pointer[mwPhase] // the phase the upcalls serve (mwupcall.go)
}

// startMaster creates the master's instance in a sub-pool, starts the workers in
// every worker process and connects to each of them. concurrency > 0 makes the
// concurrent variant's port, with that many concurrent upcalls.
func startMaster(ctx context.Context, g *cluster.Group, e *env, links []*link, perProc int, withRaw bool, concurrency int) (*master, error) {
	total := len(links) * perProc
	m := &master{links: links, to: make([]ipl.SendPort, total),
		answer: mwAnswer{true, -8, 16, -16, 32, 64, 3.2, 6.4}}
	args := mwArgs{Pool: g.Pool() + "-mw", Registry: g.RegistryAddr(), Size: total + 1,
		Procs: len(links), PerProc: perProc, Concurrent: concurrency > 0}
	opts := []ipl.Option{ipl.WithRegistry(args.Registry), ipl.WithPool(args.Pool), ipl.WithPoolSize(args.Size),
		ipl.WithPortTypes(mwReqType, mwRepType), ipl.WithTag("master"), ipl.WithLogger(e.Log)}
	opts = append(opts, implOptions(e)...)
	var err error
	if m.ib, err = ipl.New(ctx, opts...); err != nil {
		return nil, fmt.Errorf("master instance: %w", err)
	}
	fail := func(err error) (*master, error) { m.close(); return nil, err }
	if m.req, err = m.ib.CreateReceivePort(ctx, mwReqType, mwRequestPort, ipl.Global(), ipl.WithMessageHandler(m.upcall)); err != nil {
		return fail(err)
	}
	if concurrency > 0 {
		if m.reqCC, err = m.ib.CreateReceivePort(ctx, mwReqType, mwConcurrentPort, ipl.Global(),
			ipl.WithMessageHandler(m.upcall), ipl.WithConcurrentUpcalls(concurrency)); err != nil {
			return fail(err)
		}
	}
	if withRaw {
		if m.raw, err = rawnet.Listen(rawListenAddr(g)); err != nil {
			return fail(err)
		}
		args.RawAddr = m.raw.Addr()
	}
	for p, l := range links {
		a := args
		a.Process = p
		if err := l.request(ctx, opWorkers, func(w ipl.WriteMessage) error { return w.WriteObject(a) }); err != nil {
			return fail(fmt.Errorf("starting the workers of process %d: %w", p, err))
		}
	}
	for range total {
		msg, err := m.req.Receive(ctx)
		if err != nil {
			return fail(fmt.Errorf("waiting for the workers: %w", err))
		}
		var r mwRequestObj
		kind, err := msg.ReadByte()
		if err == nil {
			err = msg.ReadObject(&r)
		}
		origin := msg.Origin().Ibis
		if _, ferr := msg.Finish(); err == nil {
			err = ferr
		}
		if err == nil && (kind != mwHello || r.Worker < 0 || int(r.Worker) >= total || m.to[r.Worker] != nil) {
			err = fmt.Errorf("%w: kind %d from worker %d while waiting for hellos", errNotAnswer, kind, r.Worker)
		}
		if err != nil {
			return fail(err)
		}
		sp, err := m.ib.CreateSendPort(mwRepType, "mw-to-"+strconv.Itoa(int(r.Worker)))
		if err != nil {
			return fail(err)
		}
		m.to[r.Worker] = sp
		if err := sp.Connect(ctx, origin, mwReplyPort); err != nil {
			return fail(fmt.Errorf("connecting to worker %d: %w", r.Worker, err))
		}
	}
	return m, nil
}

// implOptions are the implementation options every instance of the run gets.
func implOptions(e *env) []ipl.Option {
	var opts []ipl.Option
	if e.Impl != "" {
		opts = append(opts, ipl.WithImplementation(e.Impl))
	}
	for k, v := range e.Props {
		opts = append(opts, ipl.WithProperty(k, v))
	}
	return opts
}

// send sends one message to worker i.
func (m *master) send(ctx context.Context, i int, fill func(w ipl.WriteMessage) error) error {
	w, err := m.to[i].NewMessage(ctx)
	if err != nil {
		return err
	}
	if err := fill(w); err != nil {
		_, _ = w.Finish()
		return err
	}
	_, err = w.Finish()
	return err
}

// startPhase tells workers 0..k-1 to run for a warm-up of warm and then d, against
// the raw server or against the master's port of variant v.
func (m *master) startPhase(ctx context.Context, k int, warm, d time.Duration, raw bool, v mwVariant) error {
	for i := range k {
		if err := m.send(ctx, i, func(w ipl.WriteMessage) error {
			if err := w.WriteByte(mwGo); err != nil {
				return err
			}
			if err := w.WriteBool(raw); err != nil {
				return err
			}
			if err := w.WriteByte(byte(v)); err != nil {
				return err
			}
			if err := w.WriteInt64(int64(warm)); err != nil {
				return err
			}
			return w.WriteInt64(int64(d))
		}); err != nil {
			return err
		}
	}
	return nil
}

// phase runs workers 0..k-1 for a warm-up of d/5 and then d, and returns the
// requests per second the master of variant v answered (or, raw, the raw server did).
func (m *master) phase(ctx context.Context, k int, d time.Duration, raw bool, v mwVariant) (float64, error) {
	warm := d / 5
	if !raw && v != mwExplicit {
		return m.upcallPhase(ctx, k, warm, d, v)
	}
	if err := m.startPhase(ctx, k, warm, d, raw, v); err != nil {
		return 0, err
	}
	if raw {
		return m.rawCounts(ctx, k)
	}
	start := time.Now()
	measureFrom, measureTo := start.Add(warm), start.Add(warm+d)
	var count int
	var last time.Time
	for stopped := 0; stopped < k; {
		msg, err := m.req.Receive(ctx)
		if err != nil {
			return 0, err
		}
		var r mwRequestObj
		kind, err := msg.ReadByte()
		if err == nil {
			err = msg.ReadObject(&r)
		}
		if _, ferr := msg.Finish(); err == nil {
			err = ferr
		}
		if err == nil && (kind != mwRequest || r.Worker < 0 || int(r.Worker) >= k) {
			err = fmt.Errorf("%w: kind %d from worker %d during a phase of %d workers", errNotAnswer, kind, r.Worker, k)
		}
		if err != nil {
			return 0, err
		}
		now := time.Now()
		if now.After(measureTo) {
			stopped++
			if err := m.send(ctx, int(r.Worker), func(w ipl.WriteMessage) error { return w.WriteByte(mwStop) }); err != nil {
				return 0, err
			}
			continue
		}
		if err := m.send(ctx, int(r.Worker), func(w ipl.WriteMessage) error {
			if err := w.WriteByte(mwData); err != nil {
				return err
			}
			return w.WriteObject(&m.answer)
		}); err != nil {
			return 0, err
		}
		if now.After(measureFrom) {
			count++
			last = time.Now()
		}
	}
	if count == 0 || !last.After(measureFrom) {
		return 0, errors.New("no request was answered in the measuring window (raise -duration)")
	}
	return float64(count) / last.Sub(measureFrom).Seconds(), nil
}

// rawCounts collects the raw phase's counts from k workers.
func (m *master) rawCounts(ctx context.Context, k int) (float64, error) {
	var rate float64
	for range k {
		msg, err := m.req.Receive(ctx)
		if err != nil {
			return 0, err
		}
		kind, err := msg.ReadByte()
		var n, ns int64
		if err == nil {
			n, err = msg.ReadInt64()
		}
		if err == nil {
			ns, err = msg.ReadInt64()
		}
		if _, ferr := msg.Finish(); err == nil {
			err = ferr
		}
		if err == nil && (kind != mwRawCount || ns <= 0 || n < 0) {
			err = fmt.Errorf("%w: kind %d (count %d in %d ns) in a raw phase", errNotAnswer, kind, n, ns)
		}
		if err != nil {
			return 0, err
		}
		rate += float64(n) / (float64(ns) / 1e9)
	}
	return rate, nil
}

// stop ends every worker and waits for the worker processes to report.
func (m *master) stop(ctx context.Context) error {
	m.stopped = true
	var errs []error
	for i := range m.to {
		if err := m.send(ctx, i, func(w ipl.WriteMessage) error { return w.WriteByte(mwQuit) }); err != nil {
			errs = append(errs, fmt.Errorf("stopping worker %d: %w", i, err))
		}
	}
	for p, l := range m.links {
		var msg string
		if err := l.await(ctx, func(r ipl.ReadMessage) error {
			var err error
			msg, err = r.ReadString()
			return err
		}); err != nil {
			errs = append(errs, fmt.Errorf("worker process %d: %w", p, err))
		} else if msg != "" {
			errs = append(errs, fmt.Errorf("worker process %d: %s", p, msg))
		}
	}
	return errors.Join(errs...)
}

func (m *master) close() {
	if m.raw != nil {
		_ = m.raw.Close()
	}
	if m.ib != nil {
		_ = m.ib.Close()
	}
}
