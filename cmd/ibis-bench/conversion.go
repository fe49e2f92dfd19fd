package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/memexp"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
	"github.com/ibisgo/ibis/serialization"
)

func init() {
	register(&command{
		name:    "conversion",
		summary: "Table 6.1: MB/s of converting int32/int64/float64 slices per element, by byte view, and by the data serialization (in memory)",
		setup:   setupConversion,
	})
}

// memFlags are the measuring flags of the in-memory experiments
// (conversion and serialization).
type memFlags struct {
	orders   string
	reps     int
	minBatch time.Duration
	stat     string
	copySink bool
}

func (m *memFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&m.orders, "orders", "native,swapped", "byte orders: native (this machine's) and swapped (the other: every element byte-swapped on both sides)")
	fs.IntVar(&m.reps, "reps", memexp.DefaultRepetitions, "timed batches per case")
	fs.DurationVar(&m.minBatch, "min-batch", memexp.DefaultMinBatch, "shortest timed batch: operations are repeated until a batch lasts this long")
	fs.StringVar(&m.stat, "stat", "sextile", "statistic of the batch timings reported: sextile (lower sextile) or median")
	fs.BoolVar(&m.copySink, "copy-sink", false, "Writer cases copy every message into memory (as a transport does) instead of only counting its bytes")
}

// options turns the flags into memexp options; errors are usage errors.
func (m *memFlags) options(e *env) ([]memexp.Option, []memexp.Order, error) {
	orders, err := memexp.ParseOrders(m.orders)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: -orders: %w", errUsage, err)
	}
	st, err := memexp.ParseStatistic(m.stat)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: -stat: %w", errUsage, err)
	}
	opts := []memexp.Option{
		memexp.WithRepetitions(m.reps), memexp.WithMinBatch(m.minBatch), memexp.WithStatistic(st),
		memexp.WithLogger(e.Log), memexp.WithProgress(e.Progress),
	}
	return opts, orders, nil
}

// memUsage marks bad parameters found by memexp as usage errors.
func memUsage(err error) error {
	if errors.Is(err, memexp.ErrInvalid) {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	return err
}

// memNotes are the notes every in-memory table carries.
func memNotes(e *env, stat string, reps int, minBatchNs int64, native string) []string {
	notes := []string{
		fmt.Sprintf("in memory, one process, no network; this machine is %s; MB/s = 10^6 bytes/s from the %s of %d timed batches of at least %v each",
			native, statName(stat), reps, time.Duration(minBatchNs)),
	}
	if e.Impl != "" || len(e.Props) > 0 {
		notes = append(notes, "-impl and the nio flags do not apply to an in-memory experiment")
	}
	return notes
}

func statName(s string) string {
	if s == "sextile" {
		return "lower sextile"
	}
	return s
}

type conversionFlags struct {
	mem                   memFlags
	types, sizes, methods string
}

func setupConversion(fs *flag.FlagSet) func(ctx context.Context, e *env) (*report.Report, error) {
	var f conversionFlags
	fs.StringVar(&f.types, "types", "int32,int64,float64", "element types: int16, int32, int64, float32, float64")
	fs.StringVar(&f.sizes, "sizes", "64,8K,100K", "slice sizes in bytes (K = 1024, M = 1024*1024)")
	fs.StringVar(&f.methods, "methods", "loop,view,stream", "methods: loop (per element), view (byte view: copy or word-wise swap), stream (serialization.Writer/Reader in memory)")
	f.mem.register(fs)
	return func(ctx context.Context, e *env) (*report.Report, error) {
		var p memexp.ConversionParams
		var err error
		if p.Elems, err = memexp.ParseElems(f.types); err != nil {
			return nil, fmt.Errorf("%w: -types: %w", errUsage, err)
		}
		if p.Sizes, err = memexp.ParseSizes(f.sizes); err != nil {
			return nil, fmt.Errorf("%w: -sizes: %w", errUsage, err)
		}
		if p.Methods, err = memexp.ParseMethods(f.methods); err != nil {
			return nil, fmt.Errorf("%w: -methods: %w", errUsage, err)
		}
		opts, orders, err := f.mem.options(e)
		if err != nil {
			return nil, err
		}
		p.Orders, p.CopySink = orders, f.mem.copySink
		res, err := memexp.Conversion(ctx, p, opts...)
		if err != nil {
			return nil, memUsage(err)
		}
		return conversionReport(e, res), nil
	}
}

// conversionReport lays the result out as Table 6.1: a row per element type
// and size, a write and a read column per method, one table per byte order,
// and the cost of the swapped order when both were measured.
func conversionReport(e *env, res *memexp.ConversionResult) *report.Report {
	rep := report.New("conversion")
	p := res.Params
	var cols []string
	cols = append(cols, "data")
	for _, m := range p.Methods {
		cols = append(cols, m.String()+" write", m.String()+" read")
	}
	notes := memNotes(e, res.Statistic, res.Repetitions, res.MinBatchNs, res.NativeOrder)
	stream := slices.Contains(p.Methods, memexp.MethodStream)
	if slices.Contains(p.Methods, memexp.MethodLoop) || slices.Contains(p.Methods, memexp.MethodView) {
		notes = append(notes, "loop: one element at a time through a binary.ByteOrder (Ibis's simple conversion); view: a byte view of the slice, one copy or a word-wise swap")
	}
	if stream {
		notes = append(notes, "stream: a serialization.Writer writing the slice as one message to an in-memory sink, a Reader reading it back from memory (headers included in the time, not in the bytes)")
	}
	switch {
	case stream && p.CopySink:
		notes = append(notes, "-copy-sink: the stream writes copy every message into memory")
	case stream:
		notes = append(notes, fmt.Sprintf("stream write of slices of %d bytes or more in native order is no copy at all (a bulk packet is the caller's memory): its figure is the per-message cost; -copy-sink adds the copy a transport makes", serialization.DefaultBulkThreshold))
	}
	row := func(e memexp.Elem, size int) []any {
		return []any{fmt.Sprintf("%s %s[]", memexp.FormatSize(size), e)}
	}
	// The byte count of a case is the requested size rounded down to whole elements.
	bytesOf := func(e memexp.Elem, size int) int { return size / e.Size() * e.Size() }
	for _, o := range p.Orders {
		t := &report.Table{Title: fmt.Sprintf("conversion, %s byte order (MB/s)", o), Columns: cols, Notes: notes}
		for _, el := range p.Elems {
			for _, size := range p.Sizes {
				r := row(el, bytesOf(el, size))
				for _, m := range p.Methods {
					for _, d := range []memexp.Direction{memexp.Write, memexp.Read} {
						c, _ := res.Find(el, bytesOf(el, size), m, o, d)
						r = append(r, c.MBps)
					}
				}
				t.Rows = append(t.Rows, r)
			}
		}
		rep.Tables = append(rep.Tables, t)
		notes = nil // once is enough
	}
	if len(p.Orders) == 2 {
		t := &report.Table{
			Title:   "conversion, cost of the swapped byte order (native MB/s / swapped MB/s)",
			Columns: cols,
			Notes:   []string{"1.0: swapping is free; 2.0: the swapped order takes twice as long. Ibis lets the receiver make right, so this is only paid between machines of different endianness"},
		}
		for _, el := range p.Elems {
			for _, size := range p.Sizes {
				r := row(el, bytesOf(el, size))
				for _, m := range p.Methods {
					for _, d := range []memexp.Direction{memexp.Write, memexp.Read} {
						n, _ := res.Find(el, bytesOf(el, size), m, memexp.OrderNative, d)
						s, _ := res.Find(el, bytesOf(el, size), m, memexp.OrderSwapped, d)
						r = append(r, ratio(n.MBps, s.MBps))
					}
				}
				t.Rows = append(t.Rows, r)
			}
		}
		rep.Tables = append(rep.Tables, t)
	}
	if len(p.Sizes) > 1 {
		for _, o := range p.Orders {
			for _, d := range []memexp.Direction{memexp.Write, memexp.Read} {
				pl := &report.Plot{
					Title:  fmt.Sprintf("conversion %s, %s byte order", d, o),
					XLabel: "slice size (bytes)", YLabel: "MB/s", LogX: true, LogY: true,
				}
				for _, m := range p.Methods {
					for _, el := range p.Elems {
						s := report.Series{Name: fmt.Sprintf("%s %s", m, el)}
						for _, size := range p.Sizes {
							c, _ := res.Find(el, bytesOf(el, size), m, o, d)
							s.X = append(s.X, float64(c.Bytes))
							s.Y = append(s.Y, c.MBps)
						}
						pl.Series = append(pl.Series, s)
					}
				}
				rep.Plots = append(rep.Plots, pl)
			}
		}
	}
	rep.Set("native_order", res.NativeOrder)
	rep.Set("statistic", res.Statistic)
	rep.Set("repetitions", res.Repetitions)
	rep.Set("min_batch_ns", res.MinBatchNs)
	rep.Set("copy_sink", p.CopySink)
	rep.Set("cases", res.Cases)
	return rep
}

// ratio returns a/b, or 0 when b is not positive (nothing measured).
func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}
