package memexp

import (
	"context"
	"errors"
	"testing"
	"time"
)

// fakeTimer is a clock that only moves when the fake operation runs: call
// c of run(k) takes k*cost(c) nanoseconds. It records every call.
type fakeTimer struct {
	now   time.Time
	cost  func(call int) int64
	calls []int // k of each call
}

func (f *fakeTimer) clock() time.Time { return f.now }

func (f *fakeTimer) bench() *bench {
	return &bench{
		name:  "synthetic",
		reset: func() {},
		run: func(k int) error {
			f.now = f.now.Add(time.Duration(int64(k) * f.cost(len(f.calls))))
			f.calls = append(f.calls, k)
			return nil
		},
		check: func() error { return nil },
	}
}

func measureFake(t *testing.T, cost func(int) int64, opts ...Option) (Measurement, *fakeTimer) {
	t.Helper()
	f := &fakeTimer{now: time.Unix(0, 0), cost: cost}
	cfg, err := newConfig(append([]Option{withClock(f.clock)}, opts...))
	if err != nil {
		t.Fatal(err)
	}
	m, err := measure(t.Context(), cfg, f.bench())
	if err != nil {
		t.Fatal(err)
	}
	return m, f
}

func TestMeasureKnownTimings(t *testing.T) {
	// Any 13 consecutive calls take 100 to 112 ns per operation, in a
	// scrambled order, so the 13 timed batches hold exactly those values
	// however long calibration took.
	cost := func(c int) int64 { return 100 + int64(c*5%13) }
	m, f := measureFake(t, cost, WithRepetitions(13), WithMinBatch(time.Millisecond))
	if m.SextileNs != 102 || m.MedianNs != 106 || m.MinNs != 100 || m.MaxNs != 112 {
		t.Fatalf("sextile %v, median %v, min %v, max %v; want 102, 106, 100, 112", m.SextileNs, m.MedianNs, m.MinNs, m.MaxNs)
	}
	if m.NsPerOp != m.SextileNs || m.Statistic != "sextile" {
		t.Fatalf("reported %v (%s), want the lower sextile", m.NsPerOp, m.Statistic)
	}
	if m.Reps != 13 {
		t.Fatalf("%d repetitions, want 13", m.Reps)
	}
	// Every timed batch has the calibrated size, long enough for the
	// minimum batch time even at the fastest operation.
	if int64(m.Batch)*100 < int64(time.Millisecond) {
		t.Fatalf("batch of %d operations of >=100 ns is shorter than 1ms", m.Batch)
	}
	timed := f.calls[len(f.calls)-13:]
	for _, k := range timed {
		if k != m.Batch {
			t.Fatalf("timed batches of %v operations, want all %d", timed, m.Batch)
		}
	}
	if got, want := m.MBps(1000), 1000/102.0*1e3; got != want {
		t.Fatalf("MBps(1000) = %v, want %v", got, want)
	}

	m, _ = measureFake(t, cost, WithRepetitions(13), WithMinBatch(time.Millisecond), WithStatistic(StatMedian))
	if m.NsPerOp != 106 || m.Statistic != "median" {
		t.Fatalf("median statistic reported %v (%s), want 106", m.NsPerOp, m.Statistic)
	}
}

func TestMeasureIgnoresOutliers(t *testing.T) {
	// One batch in six is disturbed a hundredfold: the mean would be 17.5
	// times the true cost, the lower sextile and the median are not moved.
	cost := func(c int) int64 {
		if c%6 == 0 {
			return 10000
		}
		return 100
	}
	m, _ := measureFake(t, cost, WithRepetitions(60), WithMinBatch(100*time.Microsecond))
	if m.NsPerOp != 100 || m.MedianNs != 100 || m.MaxNs != 10000 {
		t.Fatalf("reported %v, median %v, max %v; want 100, 100, 10000", m.NsPerOp, m.MedianNs, m.MaxNs)
	}
}

func TestMeasureNoMinBatch(t *testing.T) {
	m, f := measureFake(t, func(int) int64 { return 5 }, WithRepetitions(4), WithMinBatch(0))
	if m.Batch != 1 || m.NsPerOp != 5 {
		t.Fatalf("batch %d, %v ns/op; want 1, 5", m.Batch, m.NsPerOp)
	}
	// One checked run, one calibration run, four timed runs.
	if len(f.calls) != 6 {
		t.Fatalf("%d calls, want 6", len(f.calls))
	}
}

func TestMeasureInvisibleOperation(t *testing.T) {
	// An operation the clock never sees ends calibration at maxBatch
	// instead of looping forever.
	m, _ := measureFake(t, func(int) int64 { return 0 }, WithRepetitions(2))
	if m.Batch != maxBatch || m.NsPerOp != 0 || m.MBps(100) != 0 {
		t.Fatalf("batch %d, %v ns/op, %v MB/s; want %d, 0, 0", m.Batch, m.NsPerOp, m.MBps(100), maxBatch)
	}
}

func TestMeasureErrors(t *testing.T) {
	cfg, err := newConfig(fast)
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	fail := &bench{name: "failing", reset: func() {}, run: func(int) error { return boom }, check: func() error { return nil }}
	if _, err := measure(t.Context(), cfg, fail); !errors.Is(err, boom) {
		t.Fatalf("failing run: %v, want boom", err)
	}
	// A check that fails after timing (the output went wrong during the
	// timed runs) fails the case too.
	runs := 0
	late := &bench{name: "late", reset: func() {},
		run: func(k int) error { runs += k; return nil },
		check: func() error {
			if runs > 1 {
				return ErrMismatch
			}
			return nil
		}}
	if _, err := measure(t.Context(), cfg, late); !errors.Is(err, ErrMismatch) {
		t.Fatalf("late mismatch: %v, want ErrMismatch", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ok := &bench{name: "ok", reset: func() {}, run: func(int) error { return nil }, check: func() error { return nil }}
	if _, err := measure(ctx, cfg, ok); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v, want context.Canceled", err)
	}
}

func TestOptionsValidated(t *testing.T) {
	for _, opts := range [][]Option{
		{WithRepetitions(0)},
		{WithRepetitions(MaxRepetitions + 1)},
		{WithMinBatch(-time.Second)},
		{WithMinBatch(MaxMinBatch + 1)},
	} {
		if _, err := newConfig(opts); !errors.Is(err, ErrInvalid) {
			t.Errorf("options %v: %v, want ErrInvalid", opts, err)
		}
	}
	// nil options and a nil logger or progress function keep the defaults.
	cfg, err := newConfig([]Option{nil, WithLogger(nil), WithProgress(nil)})
	if err != nil || cfg.log == nil || cfg.progress == nil || cfg.reps != DefaultRepetitions {
		t.Fatalf("defaults: %+v, %v", cfg, err)
	}
}

func TestMeasureGroupTakesTurns(t *testing.T) {
	// Two operations on one clock, of 100 and 300 ns per operation, every
	// fourth call of each disturbed fiftyfold (at most two of the seven
	// timed batches). Each gets its own time back, and the timed batches
	// alternate between them.
	now := time.Unix(0, 0)
	var order []string
	mk := func(name string, cost int64) *bench {
		calls := 0
		return &bench{name: name, reset: func() {},
			run: func(k int) error {
				c := cost
				if calls++; calls%4 == 0 {
					c *= 50
				}
				now = now.Add(time.Duration(int64(k) * c))
				order = append(order, name)
				return nil
			},
			check: func() error { return nil }}
	}
	cfg, err := newConfig([]Option{withClock(func() time.Time { return now }), WithRepetitions(7), WithMinBatch(10 * time.Microsecond)})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := measureGroup(t.Context(), cfg, []*bench{mk("a", 100), mk("b", 300)})
	if err != nil {
		t.Fatal(err)
	}
	if ms[0].NsPerOp != 100 || ms[1].NsPerOp != 300 || ms[0].MaxNs != 5000 || ms[0].Reps != 7 || ms[1].Reps != 7 {
		t.Fatalf("measured %+v", ms)
	}
	timed := order[len(order)-14:]
	for i, name := range timed {
		if want := []string{"a", "b"}[i%2]; name != want {
			t.Fatalf("timed batches ran in the order %v, want a and b taking turns", timed)
		}
	}
}
