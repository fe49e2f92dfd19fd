package memexp

import (
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Defaults of the timing options. They keep each experiment's default run
// within about twenty seconds on a small machine while taking enough
// samples for the lower sextile to be stable.
const (
	// DefaultRepetitions is the number of timed batches per case.
	DefaultRepetitions = 60
	// DefaultMinBatch is the shortest a timed batch may be: far above the
	// clock's resolution and the cost of reading it.
	DefaultMinBatch = time.Millisecond
	// MaxRepetitions bounds WithRepetitions.
	MaxRepetitions = 1_000_000
	// MaxMinBatch bounds WithMinBatch.
	MaxMinBatch = 10 * time.Second
)

// Option configures how an experiment measures (not what it measures: that
// is in the parameter structs).
type Option func(*config)

type config struct {
	reps     int
	minBatch time.Duration
	stat     Statistic
	log      *zap.Logger
	progress func(format string, a ...any)
	now      func() time.Time // the clock; a fake one in tests
}

func newConfig(opts []Option) (*config, error) {
	c := &config{
		reps:     DefaultRepetitions,
		minBatch: DefaultMinBatch,
		stat:     StatLowerSextile,
		log:      zap.NewNop(),
		progress: func(string, ...any) {},
		now:      time.Now,
	}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if c.reps < 1 || c.reps > MaxRepetitions {
		return nil, fmt.Errorf("%w: repetitions %d, want 1 to %d", ErrInvalid, c.reps, MaxRepetitions)
	}
	if c.minBatch < 0 || c.minBatch > MaxMinBatch {
		return nil, fmt.Errorf("%w: minimum batch time %v, want 0 to %v", ErrInvalid, c.minBatch, MaxMinBatch)
	}
	if !c.stat.valid() {
		return nil, fmt.Errorf("%w: statistic %d", ErrInvalid, int(c.stat))
	}
	return c, nil
}

// WithRepetitions sets how many timed batches each case gets (default
// DefaultRepetitions). More repetitions make the statistic steadier on a
// noisy machine and the run longer.
func WithRepetitions(n int) Option { return func(c *config) { c.reps = n } }

// WithMinBatch sets the shortest duration of a timed batch (default
// DefaultMinBatch): operations are repeated until a batch takes at least
// this long, so that the clock's resolution and overhead do not show.
func WithMinBatch(d time.Duration) Option { return func(c *config) { c.minBatch = d } }

// WithStatistic chooses the statistic reported as the time per operation
// (default StatLowerSextile). Both it and the median are always recorded.
func WithStatistic(s Statistic) Option { return func(c *config) { c.stat = s } }

// WithLogger sets a logger for per-case diagnostics such as the chosen
// batch size (default: none). A nil logger keeps the default.
func WithLogger(l *zap.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.log = l
		}
	}
}

// WithProgress sets a function called before each group of cases is
// measured (the cases of one element type and size, or of one payload and
// serialization), so that a command can show a progress line during a long
// run. A nil
// function keeps the default, which does nothing.
func WithProgress(f func(format string, a ...any)) Option {
	return func(c *config) {
		if f != nil {
			c.progress = f
		}
	}
}

// withClock replaces the clock; tests use it to feed synthetic timings.
func withClock(now func() time.Time) Option { return func(c *config) { c.now = now } }
