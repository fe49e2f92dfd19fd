package main

import (
	"context"
	"fmt"
	"time"
)

// maxBatch bounds the operations timed together in one measurement.
const maxBatch = 1 << 16

// timer measures operations the way the suite does: each measurement times a batch
// of operations long enough to beat the clock (at least minBatch), and several
// operations are measured in turn, repetition by repetition, so that a slow phase
// of a noisy machine hits all of them alike.
type timer struct {
	reps     int
	minBatch time.Duration
	warmup   int
}

// batchFor finds how many operations make a measurement last at least minBatch.
func (t timer) batchFor(ctx context.Context, op func() error) (int, error) {
	for range t.warmup {
		if err := op(); err != nil {
			return 0, err
		}
	}
	k := 1
	for {
		start := time.Now()
		for range k {
			if err := op(); err != nil {
				return 0, err
			}
		}
		el := time.Since(start)
		if el >= t.minBatch || k >= maxBatch {
			return k, nil
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if el <= 0 {
			k *= 8
		} else {
			// Aim a little past the target so one more step is rarely needed.
			k = min(maxBatch, max(k+1, int(float64(k)*1.2*float64(t.minBatch)/float64(el))))
		}
	}
}

// measure returns, for each op, reps measurements of the time of one operation in
// seconds (a batch's time divided by its size), the ops taking turns.
func (t timer) measure(ctx context.Context, ops ...func() error) ([][]float64, error) {
	batch := make([]int, len(ops))
	for i, op := range ops {
		k, err := t.batchFor(ctx, op)
		if err != nil {
			return nil, err
		}
		batch[i] = k
	}
	out := make([][]float64, len(ops))
	for i := range out {
		out[i] = make([]float64, 0, t.reps)
	}
	for range t.reps {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("measuring: %w", err)
		}
		for i, op := range ops {
			start := time.Now()
			for range batch[i] {
				if err := op(); err != nil {
					return nil, err
				}
			}
			out[i] = append(out[i], time.Since(start).Seconds()/float64(batch[i]))
		}
	}
	return out, nil
}
