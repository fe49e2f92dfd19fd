package mpj_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ibisgo/ibis/mpj"
)

// A rank gives up a collective (its context ends) before the root's data arrives;
// the root's data for that call must not be taken by the rank's next call of the same
// kind, which returned it as its own (a silent wrong result) before collective calls
// were numbered. Bcast and Scatter, whose roots send without waiting.
func TestAbandonedCollectiveDataNotReused(t *testing.T) {
	for _, op := range []struct {
		name string
		call func(ctx context.Context, w *mpj.World, v float64, out []float64) error
	}{
		{"bcast", func(ctx context.Context, w *mpj.World, v float64, out []float64) error {
			if w.Rank() == 0 {
				out[0] = v
			}
			return w.Bcast(ctx, out, 0)
		}},
		{"scatter", func(ctx context.Context, w *mpj.World, v float64, out []float64) error {
			return w.Scatter(ctx, []float64{v, v}, out, 0)
		}},
	} {
		t.Run(op.name, func(t *testing.T) {
			ibs := pairOfIbises(t)
			ws, errs := initBoth(t, ibs, []mpj.Option{mpj.WithRank(0)}, []mpj.Option{mpj.WithRank(1)})
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			short, stop := context.WithCancel(ctx)
			stop()
			got := make([]float64, 1)
			if err := op.call(short, ws[1], 0, got); !errors.Is(err, context.Canceled) {
				t.Fatalf("rank 1's first call, with its context ended: %v", err)
			}
			if err := op.call(ctx, ws[0], 1, make([]float64, 1)); err != nil {
				t.Fatalf("the root's first call: %v", err)
			}
			var wg sync.WaitGroup
			var rootErr error
			wg.Go(func() { rootErr = op.call(ctx, ws[0], 2, make([]float64, 1)) })
			err := op.call(ctx, ws[1], 0, got)
			wg.Wait()
			if err != nil || rootErr != nil || got[0] != 2 {
				t.Errorf("the second call: rank 1 got %v (%v), the root %v; want 2, the second call's data", got[0], err, rootErr)
			}
		})
	}
}
