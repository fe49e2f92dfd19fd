package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/cluster"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
	"github.com/ibisgo/ibis/ipl"
)

func init() {
	register(&command{
		name:    "latency",
		summary: "small-message round trip of several implementations and nio flavours in the same run, against a raw socket",
		setup:   setupLatency,
	})
	registerOp(opLatency, handleLatency)
}

// latType is the echo's port type: one-to-one, data serialization, explicit receipt
// and no flavour capability, so that each variant's flavours apply.
var latType = ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO)

// Port names of the echo, published in each variant's sub-pool.
const (
	latIn   = "lat-in"   // the peer's port
	latBack = "lat-back" // the coordinator's port
)

// Commands from the coordinator to the peer once the echoes are set up.
const (
	latCmdClose byte = iota + 1 // close the variants' instances and answer
)

type latencyFlags struct {
	variants     string
	size         int
	reps, warmup int
	minBatch     time.Duration
}

func setupLatency(fs *flag.FlagSet) func(ctx context.Context, e *env) (*report.Report, error) {
	var f latencyFlags
	fs.StringVar(&f.variants, "variants", "tcp,nio:blocking/blocking,nio:nonblocking/nonblocking,nio:thread/thread",
		"variants to compare, the first being the reference: IMPL or nio:SEND/RECEIVE (flavours blocking, nonblocking, thread)")
	fs.IntVar(&f.size, "size", 0, "payload bytes per message ([]byte with WriteArray; 0: empty messages)")
	fs.IntVar(&f.reps, "reps", 100, "measurements per variant (the figure is their lower sextile)")
	fs.IntVar(&f.warmup, "warmup", 200, "round trips of each variant before measuring")
	fs.DurationVar(&f.minBatch, "min-batch", time.Millisecond, "shortest measurement: round trips are timed in batches at least this long")
	return func(ctx context.Context, e *env) (*report.Report, error) {
		vs, err := parseVariants(f.variants)
		if err != nil {
			return nil, err
		}
		if f.size < 0 || f.size > 1<<20 || f.reps < 1 || f.warmup < 0 || f.minBatch < 0 {
			return nil, fmt.Errorf("%w: -size 0 to 1M, -reps at least 1, -warmup and -min-batch not negative", errUsage)
		}
		tm := timer{reps: f.reps, minBatch: f.minBatch, warmup: f.warmup}
		return e.runNetwork(ctx, 2, 2, func(ctx context.Context, g *cluster.Group, links []*link) (*report.Report, error) {
			return latency(ctx, e, g, links[0], tm, vs, f.size)
		})
	}
}

// latArgs tell the peer which echoes to serve.
type latArgs struct {
	Registry, Pool string // the registry and the prefix of the variants' sub-pools
	Variants       []variant
	Size           int
}

// subPool is the name of variant i's sub-pool.
func (a latArgs) subPool(i int) string { return a.Pool + "-" + strconv.Itoa(i) }

// latEnd is one end of a variant's echo: its own instance, a port each way.
type latEnd struct {
	ib  ipl.Ibis
	out ipl.SendPort
	in  ipl.ReceivePort
	buf []byte
}

// openLatEnd makes the instance of variant i and its ports; the peer's end is
// "lat-in", the coordinator's "lat-back", and each connects to the other's.
func openLatEnd(ctx context.Context, e *env, a latArgs, i int, peer bool) (*latEnd, error) {
	own, other := latBack, latIn
	if peer {
		own, other = latIn, latBack
	}
	opts := []ipl.Option{ipl.WithRegistry(a.Registry), ipl.WithPool(a.subPool(i)), ipl.WithPoolSize(2),
		ipl.WithPortTypes(latType), ipl.WithTag(own), ipl.WithLogger(e.Log)}
	ib, err := ipl.New(ctx, append(opts, a.Variants[i].options()...)...)
	if err != nil {
		return nil, fmt.Errorf("variant %s: %w", a.Variants[i].Name, err)
	}
	le := &latEnd{ib: ib, buf: make([]byte, a.Size)}
	if le.in, err = ib.CreateReceivePort(ctx, latType, own, ipl.Global()); err == nil {
		if le.out, err = ib.CreateSendPort(latType, own+"-out"); err == nil {
			err = le.out.ConnectGlobal(ctx, other)
		}
	}
	if err != nil {
		_ = ib.Close()
		return nil, fmt.Errorf("variant %s: %w", a.Variants[i].Name, err)
	}
	return le, nil
}

// send sends the buffer (nothing when empty) as one message.
func (le *latEnd) send(ctx context.Context) error {
	w, err := le.out.NewMessage(ctx)
	if err != nil {
		return err
	}
	if len(le.buf) > 0 {
		err = w.WriteArray(le.buf)
	}
	if _, ferr := w.Finish(); err == nil {
		err = ferr
	}
	return err
}

// receive receives one message into the buffer.
func (le *latEnd) receive(ctx context.Context) error {
	m, err := le.in.Receive(ctx)
	if err != nil {
		return err
	}
	if len(le.buf) > 0 {
		err = m.ReadArray(le.buf)
	}
	if _, ferr := m.Finish(); err == nil {
		err = ferr
	}
	return err
}

// roundTrip is one echo from the coordinator's end.
func (le *latEnd) roundTrip(ctx context.Context) error {
	if err := le.send(ctx); err != nil {
		return err
	}
	return le.receive(ctx)
}

// check does one round trip with a pattern and checks it came back.
func (le *latEnd) check(ctx context.Context) error {
	for i := range le.buf {
		le.buf[i] = byte(i*7 + 3)
	}
	if err := le.send(ctx); err != nil {
		return err
	}
	clear(le.buf)
	if err := le.receive(ctx); err != nil {
		return err
	}
	for i, b := range le.buf {
		if b != byte(i*7+3) {
			return fmt.Errorf("%w: byte %d of the echo is %d", errNotAnswer, i, b)
		}
	}
	return nil
}

func (le *latEnd) close() error { return le.ib.Close() }

func latency(ctx context.Context, e *env, g *cluster.Group, l *link, tm timer, vs []variant, size int) (*report.Report, error) {
	raw, err := l.dialRaw(ctx)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	a := latArgs{Registry: g.RegistryAddr(), Pool: g.Pool() + "-lat", Variants: vs, Size: size}
	if err := l.request(ctx, opLatency, func(w ipl.WriteMessage) error { return w.WriteObject(a) }); err != nil {
		return nil, err
	}
	ends := make([]*latEnd, 0, len(vs))
	defer func() {
		for _, le := range ends {
			_ = le.close()
		}
	}()
	for i := range vs {
		le, err := openLatEnd(ctx, e, a, i, false)
		if err != nil {
			return nil, err
		}
		ends = append(ends, le)
	}
	if err := awaitAnswers(ctx, []*link{l}, nil); err != nil {
		return nil, fmt.Errorf("setting up the echoes: %w", err)
	}
	for i, le := range ends {
		if err := le.check(ctx); err != nil {
			return nil, fmt.Errorf("checking %s: %w", vs[i].Name, err)
		}
	}
	rawBuf := make([]byte, size)
	// ops are the raw round trip and each variant's, on ctx.
	ops := func(ctx context.Context) []func() error {
		out := []func() error{func() error {
			_, err := raw.RoundTrip(rawBuf, size)
			return err
		}}
		for _, le := range ends {
			out = append(out, func() error { return le.roundTrip(ctx) })
		}
		return out
	}
	e.Progress("measuring %d variants", len(vs))
	// A round trip that never comes back (a failed echo) ends the run after this long.
	bound := stepSlack + time.Duration(tm.reps*(len(vs)+1))*(tm.minBatch+10*time.Millisecond)
	var ms [][]float64
	if err := withDeadline(ctx, "measuring", bound, func(ctx context.Context) error {
		var err error
		ms, err = tm.measure(ctx, ops(ctx)...)
		return err
	}); err != nil {
		return nil, err
	}
	if err := l.request(ctx, opLatency, func(w ipl.WriteMessage) error { return w.WriteByte(latCmdClose) }); err != nil {
		return nil, err
	}
	if err := awaitAnswers(ctx, []*link{l}, nil); err != nil {
		return nil, fmt.Errorf("closing the echoes: %w", err)
	}
	return latencyReport(describeLatency(g), tm, size, vs, ms)
}

// describeLatency says what ran where; the variants bring their own implementations.
func describeLatency(g *cluster.Group) string {
	return fmt.Sprintf("%d processes (separate OS processes; each variant has its own pair of Ibis instances in them)", len(g.Peers)+1)
}
