package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/cluster"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/payload"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/rawnet"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/stats"
)

func init() {
	register(&command{
		name:    "throughput",
		summary: "Table 6.3: MB/s of 100 KB arrays and a 1023-object tree, plus latency, against a raw socket",
		setup:   setupThroughput,
	})
}

type throughputFlags struct {
	size, nodes, burst, reps int
	minBatch                 time.Duration
}

func setupThroughput(fs *flag.FlagSet) func(ctx context.Context, e *env) (*report.Report, error) {
	var f throughputFlags
	fs.IntVar(&f.size, "size", 100<<10, "bytes of user data per array message")
	fs.IntVar(&f.nodes, "nodes", 1023, "objects in the tree (four int32 of user data each)")
	fs.IntVar(&f.burst, "burst", 10, "messages sent before the receiver acknowledges")
	fs.IntVar(&f.reps, "reps", 60, "measurements per row (the figure is from their lower sextile)")
	fs.DurationVar(&f.minBatch, "min-batch", time.Millisecond, "shortest measurement (bursts are timed in batches at least this long)")
	return func(ctx context.Context, e *env) (*report.Report, error) {
		if f.size <= 0 || f.size%8 != 0 || f.size > payload.MaxSize {
			return nil, fmt.Errorf("%w: -size must be a positive multiple of 8 up to %d", errUsage, payload.MaxSize)
		}
		if f.nodes < 1 || f.nodes*payload.ItemSize > payload.MaxSize || f.burst < 1 || f.reps < 1 || f.minBatch < 0 {
			return nil, fmt.Errorf("%w: -nodes, -burst and -reps must be at least 1 (and -nodes within %d bytes)", errUsage, payload.MaxSize)
		}
		tm := timer{reps: f.reps, minBatch: f.minBatch, warmup: 3}
		return e.runNetwork(ctx, 2, 2, func(ctx context.Context, g *cluster.Group, links []*link) (*report.Report, error) {
			return throughput(ctx, e, g, links[0], tm, f)
		})
	}
}

func throughput(ctx context.Context, e *env, g *cluster.Group, l *link, tm timer, f throughputFlags) (*report.Report, error) {
	raw, err := l.dialRaw(ctx)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	rows := []struct {
		label string
		spec  payload.Spec
	}{
		{fmt.Sprintf("%s []byte", sizeLabel(f.size)), payload.Spec{Kind: payload.Bytes, Size: f.size}},
		{fmt.Sprintf("%s []int32", sizeLabel(f.size)), payload.Spec{Kind: payload.Int32, Size: f.size}},
		{fmt.Sprintf("%s []int64", sizeLabel(f.size)), payload.Spec{Kind: payload.Int64, Size: f.size}},
		{fmt.Sprintf("%s []float64", sizeLabel(f.size)), payload.Spec{Kind: payload.Float64, Size: f.size}},
		{fmt.Sprintf("%d-node tree", f.nodes), payload.Spec{Kind: payload.Tree, Size: f.nodes * payload.ItemSize}},
		{fmt.Sprintf("%d-node tree msgpack", f.nodes), payload.Spec{Kind: payload.TreeMsgpack, Size: f.nodes * payload.ItemSize}},
	}
	t := &report.Table{
		Title:   "throughput: " + describe(g, e),
		Columns: []string{"data", "Ibis MB/s", "raw MB/s", "Ibis/raw", "bytes/message"},
		Notes: []string{
			fmt.Sprintf("a measurement is %d messages one way and an acknowledgement back; MB/s = 10^6 bytes/s from the lower sextile of %d measurements", f.burst, tm.reps),
			"raw: the same number of bytes (the Ibis message's total, headers included) in frames over a plain net.TCPConn, measured in turn with Ibis",
			"tree user: the nodes' int32 data; tree total: every byte of the message (the encoding and Ibis headers); tree: the object codec; tree msgpack: the same nodes with a msgpack tag, the object path before the codec",
		},
	}
	values := map[string]any{}
	var rawBuf []byte
	for i, r := range rows {
		e.Progress("%s (%d/%d)", r.label, i+1, len(rows))
		if err := l.verify(ctx, r.spec); err != nil {
			return nil, fmt.Errorf("checking %s: %w", r.spec, err)
		}
		msgBytes, err := l.sink(ctx, r.spec, 1)
		if err != nil {
			return nil, err
		}
		if cap(rawBuf) < int(msgBytes) {
			rawBuf = make([]byte, msgBytes)
		}
		rb := rawBuf[:msgBytes]
		ms, err := tm.measure(ctx,
			func() error { _, err := l.sink(ctx, r.spec, f.burst); return err },
			func() error { return rawBurst(raw, rb, f.burst) })
		if err != nil {
			return nil, err
		}
		rt, err := burstRates(float64(r.spec.Size), float64(msgBytes), f.burst, ms[0], ms[1])
		if err != nil {
			return nil, err
		}
		if k := r.spec.Kind; k.IsTree() {
			t.AddRow(r.label+" user", rt.user, rt.rawUser, rt.ratio, int(msgBytes))
			t.AddRow(r.label+" total", rt.total, rt.rawTotal, rt.ratio, int(msgBytes))
			values[k.String()+"_user_mbps"], values[k.String()+"_total_mbps"] = rt.user, rt.total
			values[k.String()+"_raw_mbps"] = rt.rawTotal
			continue
		}
		t.AddRow(r.label, rt.user, rt.rawUser, rt.ratio, int(msgBytes))
		values[r.spec.Kind.String()+"_mbps"] = rt.user
		values[r.spec.Kind.String()+"_raw_mbps"] = rt.rawUser
	}
	e.Progress("latency")
	ms, err := tm.measure(ctx, func() error { return l.ping(ctx) }, func() error { _, err := raw.RoundTrip(nil, 0); return err })
	if err != nil {
		return nil, err
	}
	ib, _ := stats.LowerSextile(ms[0])
	rw, _ := stats.LowerSextile(ms[1])
	lat := &report.Table{
		Title:   "latency (one way, empty message)",
		Columns: []string{"", "Ibis", "raw", "Ibis/raw"},
		Rows:    [][]any{{"latency", seconds(ib / 2), seconds(rw / 2), ib / rw}},
		Notes:   []string{"half the lower sextile of the round-trip times"},
	}
	values["latency_seconds"], values["raw_latency_seconds"] = ib/2, rw/2
	rep := report.New("throughput")
	rep.Tables = append(rep.Tables, t, lat)
	rep.Set("throughput", values)
	return rep, nil
}

// rates are one row's figures in MB/s (10^6 bytes per second).
type rates struct {
	user, total, rawUser, rawTotal, ratio float64
}

// burstRates turns the measured times of bursts (seconds per burst of burst
// messages of user and total bytes each) into MB/s from their lower sextiles, and
// the ratio of Ibis's rate to the raw socket's.
func burstRates(user, total float64, burst int, ibisTimes, rawTimes []float64) (rates, error) {
	ib, err := stats.LowerSextile(ibisTimes)
	if err != nil {
		return rates{}, err
	}
	rw, err := stats.LowerSextile(rawTimes)
	if err != nil {
		return rates{}, err
	}
	b := float64(burst)
	return rates{
		user: user * b / ib / 1e6, total: total * b / ib / 1e6,
		rawUser: user * b / rw / 1e6, rawTotal: total * b / rw / 1e6,
		ratio: rw / ib,
	}, nil
}

// rawBurst sends count frames, the last asking for an empty acknowledgement, and
// waits for it: the raw counterpart of link.sink.
func rawBurst(c *rawnet.Conn, b []byte, count int) error {
	for range count - 1 {
		if err := c.Send(b, rawnet.NoReply); err != nil {
			return err
		}
	}
	_, err := c.RoundTrip(b, 0)
	return err
}

// sizeLabel prints a byte count as the tables of the thesis do (100 KB).
func sizeLabel(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
