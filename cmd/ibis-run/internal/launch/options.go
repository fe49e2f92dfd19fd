package launch

import (
	"fmt"
	"io"
	"os"
	"time"

	"go.uber.org/zap"
)

// Defaults used when the matching option is not given.
const (
	// DefaultGrace is how long stopped processes get between SIGTERM and SIGKILL: long enough
	// for a program to leave its pool cleanly, short enough that a broken run ends promptly.
	DefaultGrace = 5 * time.Second
	// DefaultMaxLine is the longest output line kept whole. A longer line is cut into pieces
	// of this size, each written as a line of its own, so that a process that never writes a
	// newline cannot make the launcher buffer without bound.
	DefaultMaxLine = 1 << 20
)

// outputDrainDelay bounds how long Wait waits, after a process has exited, for its output
// pipes to close. A background process that inherited the pipes could otherwise keep Wait
// blocked forever.
const outputDrainDelay = 2 * time.Second

// Option configures Start and Run. Options exist so that the common case needs none and the
// rare cases do not grow the Spec.
type Option func(*config) error

type config struct {
	stdout  io.Writer
	stderr  io.Writer
	env     func(index int) []string
	grace   time.Duration
	maxLine int
	log     *zap.Logger

	onFailure func(*ChildError)
}

func defaultConfig() config {
	return config{
		stdout:  io.Discard,
		stderr:  io.Discard,
		env:     func(int) []string { return os.Environ() },
		grace:   DefaultGrace,
		maxLine: DefaultMaxLine,
		log:     zap.NewNop(),
	}
}

// WithStdout sets where the processes' prefixed standard output lines go (default: discarded).
// The writer is used under a lock; pass the same *LockedWriter to other writers of the same
// destination (including WithStderr) so that their lines do not interleave.
func WithStdout(w io.Writer) Option {
	return func(c *config) error {
		if w == nil {
			return fmt.Errorf("%w: nil stdout writer", ErrInvalid)
		}
		c.stdout = w
		return nil
	}
}

// WithStderr sets where the processes' prefixed standard error lines go (default: discarded).
// See WithStdout about sharing a destination.
func WithStderr(w io.Writer) Option {
	return func(c *config) error {
		if w == nil {
			return fmt.Errorf("%w: nil stderr writer", ErrInvalid)
		}
		c.stderr = w
		return nil
	}
}

// WithEnv sets the function that gives the complete environment ("KEY=value" entries) of the
// process with the given launch index. The default is the launcher's own environment. A
// launcher uses it to tell each process its pool, size and index.
func WithEnv(env func(index int) []string) Option {
	return func(c *config) error {
		if env == nil {
			return fmt.Errorf("%w: nil environment function", ErrInvalid)
		}
		c.env = env
		return nil
	}
}

// WithGrace sets how long stopped processes get between SIGTERM and SIGKILL (default
// DefaultGrace). Zero kills at once.
func WithGrace(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("%w: negative grace period %v", ErrInvalid, d)
		}
		c.grace = d
		return nil
	}
}

// WithMaxLine sets the longest output line kept whole, in bytes (default DefaultMaxLine).
func WithMaxLine(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%w: maximum line length %d, want at least 1", ErrInvalid, n)
		}
		c.maxLine = n
		return nil
	}
}

// WithLogger sets the logger for starts, exits and stops (default zap.NewNop()).
func WithLogger(l *zap.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return fmt.Errorf("%w: nil logger", ErrInvalid)
		}
		c.log = l
		return nil
	}
}

// WithOnFailure sets a function called once, from the goroutine that reaped the process, when
// the first process fails and the group starts stopping the others. A launcher uses it to tell
// the user at once why the pool is going down, rather than after the grace period. It must not
// block for long; Wait returns only after it has returned.
func WithOnFailure(f func(*ChildError)) Option {
	return func(c *config) error {
		if f == nil {
			return fmt.Errorf("%w: nil failure function", ErrInvalid)
		}
		c.onFailure = f
		return nil
	}
}
