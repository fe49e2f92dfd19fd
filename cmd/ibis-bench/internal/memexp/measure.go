package memexp

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/stats"
)

// maxBatch bounds the operations of one timed batch, so that calibration
// ends even for an operation the clock cannot see at all.
const maxBatch = 1 << 30

// Measurement is the timing of one case: a statistic of the per-operation
// times of Reps batches of Batch operations each. Times are in nanoseconds
// per operation, as floats because fast operations take a few nanoseconds
// and a rounded figure would be visibly wrong.
type Measurement struct {
	// NsPerOp is the reported time: Statistic applied to the per-operation
	// times of the batches.
	NsPerOp float64
	// Statistic is the statistic NsPerOp is, by name ("sextile" or
	// "median").
	Statistic string
	// SextileNs, MedianNs, MinNs and MaxNs describe the spread of the
	// per-operation times of the batches.
	SextileNs, MedianNs, MinNs, MaxNs float64
	// Batch is the number of operations in each timed batch.
	Batch int
	// Reps is the number of timed batches.
	Reps int
}

// MBps returns the throughput of moving bytes per operation at the
// reported time, in MB/s (10^6 bytes per second, the unit of the thesis'
// tables). It returns 0 when nothing was measured.
func (m Measurement) MBps(bytes int64) float64 {
	if m.NsPerOp <= 0 {
		return 0
	}
	return float64(bytes) / m.NsPerOp * 1e3
}

// bench is one measurable case.
type bench struct {
	name  string
	reset func()            // clears the output, so check sees only later runs
	run   func(k int) error // performs the operation k times
	check func() error      // verifies the output of the last operation
}

// measure measures one bench (see measureGroup).
func measure(ctx context.Context, cfg *config, b *bench) (Measurement, error) {
	ms, err := measureGroup(ctx, cfg, []*bench{b})
	if err != nil {
		return Measurement{}, err
	}
	return ms[0], nil
}

// measureGroup checks every bench of a group once, calibrates each one's
// batch size, then times cfg.reps rounds in which every bench runs one
// batch in turn, and finally checks the output of each bench's last timed
// operation. Taking turns means that a slow phase of a shared machine hits
// all the benches of the group alike, so their ratios (native against
// swapped, loop against view) are steadier than their absolute figures.
func measureGroup(ctx context.Context, cfg *config, bs []*bench) ([]Measurement, error) {
	fail := func(b *bench, err error) ([]Measurement, error) {
		return nil, fmt.Errorf("memexp: %s: %w", b.name, err)
	}
	for _, b := range bs {
		if err := ctx.Err(); err != nil {
			return fail(b, err)
		}
		b.reset()
		if err := b.run(1); err != nil {
			return fail(b, err)
		}
		if err := b.check(); err != nil {
			return fail(b, err)
		}
	}
	runtime.GC() // start every group with the same heap, not the previous group's garbage

	timed := func(b *bench, k int) (time.Duration, error) {
		t0 := cfg.now()
		err := b.run(k)
		return cfg.now().Sub(t0), err
	}
	ks := make([]int, len(bs))
	for i, b := range bs {
		// Calibrate (and warm up): grow the batch until it takes minBatch.
		k := 1
		for {
			d, err := timed(b, k)
			if err != nil {
				return fail(b, err)
			}
			if d >= cfg.minBatch || k >= maxBatch {
				break
			}
			next := 2 * k
			if d > 0 {
				est := int(float64(k)*1.2*float64(cfg.minBatch)/float64(d)) + 1
				next = min(max(est, 2*k), 16*k)
			}
			k = min(next, maxBatch)
		}
		ks[i] = k
	}

	per := make([][]float64, len(bs))
	for i := range per {
		per[i] = make([]float64, 0, cfg.reps)
	}
	for range cfg.reps {
		if err := ctx.Err(); err != nil {
			return fail(bs[0], err)
		}
		for i, b := range bs {
			d, err := timed(b, ks[i])
			if err != nil {
				return fail(b, err)
			}
			per[i] = append(per[i], float64(d)/float64(ks[i]))
		}
	}
	ms := make([]Measurement, len(bs))
	for i, b := range bs {
		if err := b.check(); err != nil {
			return nil, fmt.Errorf("memexp: %s, after timing: %w", b.name, err)
		}
		sum, err := stats.Summarize(per[i])
		if err != nil { // unreachable: reps >= 1
			return fail(b, err)
		}
		ms[i] = Measurement{
			NsPerOp:   cfg.stat.of(sum),
			Statistic: cfg.stat.String(),
			SextileNs: sum.LowerSextile,
			MedianNs:  sum.Median,
			MinNs:     sum.Min,
			MaxNs:     sum.Max,
			Batch:     ks[i],
			Reps:      len(per[i]),
		}
		cfg.log.Debug("measured", zap.String("case", b.name), zap.Int("batch", ks[i]),
			zap.Int("reps", len(per[i])), zap.Float64("ns_per_op", ms[i].NsPerOp),
			zap.Float64("min_ns", sum.Min), zap.Float64("max_ns", sum.Max))
	}
	return ms, nil
}
