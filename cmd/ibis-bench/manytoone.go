package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/cluster"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
	"github.com/ibisgo/ibis/ipl"
)

func init() {
	register(&command{
		name:    "manytoone",
		summary: "N sender connections into one many-to-one receive port: messages/s, goroutines and memory per connection",
		setup:   setupManyToOne,
	})
	registerOp(opManyToOne, handleManyToOne)
}

// m2oType is the experiment's port type: many-to-one, data serialization, explicit
// receipt, and no receiveport.* or sendport.* capability, so that the flavour forced
// by -nio-send/-nio-receive applies (a forced blocking receive flavour falls back to
// nonblocking on a many-to-one port).
var m2oType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO)

// m2oPort is the receiver's port, published in the experiment's sub-pool.
const m2oPort = "m2o"

// Message kinds on the many-to-one port; each is followed by the sender
// connection's index (int32), a data message then by the payload.
const (
	m2oHello byte = iota + 1
	m2oData
	m2oEnd
)

// Commands from the coordinator to a sender process once its connections are open.
const (
	m2oCmdGo    byte = iota + 1 // warm-up and measuring nanoseconds follow
	m2oCmdClose                 // close the connections and end
)

// m2oFlags are the experiment's settings.
type m2oFlags struct {
	conns, senders, size int
	duration             time.Duration
	heapProfile          string
	cpuProfile           string
}

// fdSlack is what a process needs in file descriptors beyond its connections.
const fdSlack = 64

// maxM2OConns bounds -conns.
const maxM2OConns = 100000

func setupManyToOne(fs *flag.FlagSet) func(ctx context.Context, e *env) (*report.Report, error) {
	var f m2oFlags
	fs.IntVar(&f.conns, "conns", 1000, "sender connections in all, each a send port of its own")
	fs.IntVar(&f.senders, "senders", 4, "sender processes the connections are spread over")
	fs.IntVar(&f.size, "size", 64, "payload bytes per message")
	fs.DurationVar(&f.duration, "duration", 2*time.Second, "measuring time (after a warm-up of a fifth of it)")
	fs.StringVar(&f.cpuProfile, "cpu-profile", "", "write a pprof CPU profile of the receiver process during the measuring window to `FILE`")
	fs.StringVar(&f.heapProfile, "heap-profile", "", "write a pprof heap profile of the receiver process to `FILE` while every connection is open and idle")
	return func(ctx context.Context, e *env) (*report.Report, error) {
		if err := f.validate(); err != nil {
			return nil, err
		}
		return e.runNetwork(ctx, f.senders+1, 2, func(ctx context.Context, g *cluster.Group, links []*link) (*report.Report, error) {
			return manyToOne(ctx, e, g, links, f)
		})
	}
}

func (f m2oFlags) validate() error {
	switch {
	case f.conns < 1 || f.conns > maxM2OConns:
		return fmt.Errorf("%w: -conns %d: want 1 to %d", errUsage, f.conns, maxM2OConns)
	case f.senders < 1 || f.senders > f.conns:
		return fmt.Errorf("%w: -senders %d: want at least 1 and at most -conns", errUsage, f.senders)
	case f.size < 0 || f.size > 1<<20:
		return fmt.Errorf("%w: -size %d: want 0 to 1M", errUsage, f.size)
	case f.duration <= 0:
		return fmt.Errorf("%w: -duration must be positive", errUsage)
	}
	return nil
}

// spread divides n connections over p processes as evenly as possible.
func spread(n, p int) []int {
	out := make([]int, p)
	for i := range out {
		out[i] = n / p
		if i < n%p {
			out[i]++
		}
	}
	return out
}

// m2oArgs tell a sender process which connections to open.
type m2oArgs struct {
	Pool, Registry string
	Size           int // members of the sub-pool
	First, Conns   int // global index of its first connection, and how many
	MsgSize        int
}

// m2oResult is what the receiver measured.
type m2oResult struct {
	conns, procs, size int
	rate               float64       // messages per second in the window
	overall            float64       // messages per second from the start of the traffic to the last end
	cpuPerMessage      time.Duration // CPU time of the receiver process per message in the window
	window             time.Duration
	counted, received  int64   // data messages in the window, and in all
	sent               int64   // data messages the senders report
	perConn            []int64 // data messages in the window, per connection
	before, base       memSnap // process before the receiving instance; instance and port, no sender
	connected, traffic memSnap // all connections open: idle after a hello each; after the traffic
	load               memSnap // all connections open, after the window while they still send
	fdLimit            uint64
	connectTime        time.Duration
}

func manyToOne(ctx context.Context, e *env, g *cluster.Group, links []*link, f m2oFlags) (*report.Report, error) {
	procs := len(links)
	if f.senders != procs {
		e.Log.Debug("sender processes differ from -senders (existing pool)")
	}
	res := &m2oResult{conns: f.conns, procs: procs, size: f.size}
	var err error
	if res.fdLimit, err = raiseFileLimit(uint64(f.conns + fdSlack)); err != nil {
		return nil, err
	}
	if f.heapProfile != "" {
		runtime.MemProfileRate = 1 // every allocation from here on, for an exact profile
	}
	res.before = takeSnapshot()
	args := m2oArgs{Pool: g.Pool() + "-m2o", Registry: g.RegistryAddr(), Size: procs + 1, MsgSize: f.size}
	opts := []ipl.Option{ipl.WithRegistry(args.Registry), ipl.WithPool(args.Pool), ipl.WithPoolSize(args.Size),
		ipl.WithPortTypes(m2oType), ipl.WithTag("receiver"), ipl.WithLogger(e.Log)}
	ib, err := ipl.New(ctx, append(opts, implOptions(e)...)...)
	if err != nil {
		return nil, fmt.Errorf("receiver instance: %w", err)
	}
	defer ib.Close()
	rp, err := ib.CreateReceivePort(ctx, m2oType, m2oPort, ipl.Global())
	if err != nil {
		return nil, err
	}
	defer rp.Close()
	res.base = takeSnapshot()
	r := &m2oReceiver{rp: rp, conns: f.conns, buf: make([]byte, f.size), perConn: make([]int64, f.conns), cpuProfile: f.cpuProfile}
	defer func() { _ = r.stopProfile() }()

	// Open the connections: every sender process connects its share and sends a
	// hello on each; the receiver waits for every hello.
	start := time.Now()
	first := 0
	for p, n := range spread(f.conns, procs) {
		a := args
		a.First, a.Conns = first, n
		first += n
		if err := links[p].request(ctx, opManyToOne, func(w ipl.WriteMessage) error { return w.WriteObject(a) }); err != nil {
			return nil, fmt.Errorf("starting sender process %d: %w", p, err)
		}
	}
	e.Progress("connecting %d senders", f.conns)
	if err := awaitAnswers(ctx, links, nil); err != nil {
		return nil, fmt.Errorf("opening the connections: %w", err)
	}
	if err := withDeadline(ctx, "waiting for the hellos", stepSlack+time.Duration(f.conns)*perConnStep, r.hellos); err != nil {
		return nil, err
	}
	res.connectTime = time.Since(start)
	if n := len(rp.ConnectedTo()); n != f.conns {
		return nil, fmt.Errorf("the receive port has %d connections, want %d", n, f.conns)
	}
	res.connected = takeSnapshot()
	if f.heapProfile != "" {
		if err := writeHeapProfile(f.heapProfile); err != nil {
			return nil, err
		}
	}

	// The traffic: every connection sends as fast as it can for warm-up + duration
	// (and a little more), then an end message; the receiver counts what arrives in
	// its measuring window.
	warm := f.duration / 5
	senderTime := warm + f.duration + f.duration/10 + 100*time.Millisecond
	for p, l := range links {
		if err := l.request(ctx, opManyToOne, func(w ipl.WriteMessage) error {
			if err := w.WriteByte(m2oCmdGo); err != nil {
				return err
			}
			return w.WriteInt64(int64(senderTime))
		}); err != nil {
			return nil, fmt.Errorf("starting the traffic of process %d: %w", p, err)
		}
	}
	e.Progress("%d connections sending", f.conns)
	now := time.Now()
	if err := withDeadline(ctx, "receiving the traffic", senderTime+2*stepSlack, func(ctx context.Context) error {
		return r.traffic(ctx, now.Add(warm), now.Add(warm+f.duration))
	}); err != nil {
		return nil, err
	}
	if err := awaitAnswers(ctx, links, func(m ipl.ReadMessage) error {
		n, err := m.ReadInt64()
		res.sent += n
		return err
	}); err != nil {
		return nil, fmt.Errorf("the traffic: %w", err)
	}
	res.traffic = takeSnapshot()
	res.counted, res.received, res.perConn, res.load = r.counted, r.received, r.perConn, r.load
	res.window = r.last.Sub(r.from)
	if r.counted == 0 || res.window <= 0 || !r.loadTaken {
		return nil, errors.New("no message arrived in the measuring window (raise -duration)")
	}
	res.rate = float64(r.counted) / res.window.Seconds()
	res.cpuPerMessage = (r.cpuTo - r.cpuFrom) / time.Duration(r.counted)
	res.overall = float64(r.received) / r.ended.Sub(now).Seconds()
	if res.received != res.sent {
		return nil, fmt.Errorf("the senders sent %d data messages, the receiver got %d", res.sent, res.received)
	}
	for p, l := range links {
		if err := l.request(ctx, opManyToOne, func(w ipl.WriteMessage) error { return w.WriteByte(m2oCmdClose) }); err != nil {
			return nil, fmt.Errorf("closing process %d: %w", p, err)
		}
	}
	if err := awaitAnswers(ctx, links, nil); err != nil {
		return nil, fmt.Errorf("closing the connections: %w", err)
	}
	return m2oReport(describe(g, e), rp.Type(), res), nil
}

// awaitAnswers waits for the answer of every peer process of links to a step of an
// experiment: read reads what precedes the error text ("" when the step went well).
func awaitAnswers(ctx context.Context, links []*link, read func(m ipl.ReadMessage) error) error {
	var errs []error
	for p, l := range links {
		var msg string
		err := l.await(ctx, func(m ipl.ReadMessage) error {
			if read != nil {
				if err := read(m); err != nil {
					return err
				}
			}
			var err error
			msg, err = m.ReadString()
			return err
		})
		if err == nil && msg != "" {
			err = errors.New(msg)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("process %d: %w", p, err))
		}
	}
	return errors.Join(errs...)
}
