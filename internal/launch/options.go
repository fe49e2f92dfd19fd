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
// rare cases do not grow the Spec. Like the module's other options they only record a value;
// Start checks the values (config.validate), so a bad one is an ErrInvalid from Start.
type Option func(*config)

type config struct {
	stdout  io.Writer
	stderr  io.Writer
	env     func(index int) []string
	grace   time.Duration
	maxLine int
	log     *zap.Logger

	onFailure func(*ChildError)
	onExit    func(Status)
	onFailSet bool // WithOnFailure was given (a nil function is then an error)
	onExitSet bool // WithOnExit was given
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

// validate reports the first option value that cannot work, as an error matching ErrInvalid.
func (c *config) validate() error {
	switch {
	case c.stdout == nil:
		return fmt.Errorf("%w: nil stdout writer", ErrInvalid)
	case c.stderr == nil:
		return fmt.Errorf("%w: nil stderr writer", ErrInvalid)
	case c.env == nil:
		return fmt.Errorf("%w: nil environment function", ErrInvalid)
	case c.grace < 0:
		return fmt.Errorf("%w: negative grace period %v", ErrInvalid, c.grace)
	case c.maxLine < 1:
		return fmt.Errorf("%w: maximum line length %d, want at least 1", ErrInvalid, c.maxLine)
	case c.log == nil:
		return fmt.Errorf("%w: nil logger", ErrInvalid)
	case c.onFailSet && c.onFailure == nil:
		return fmt.Errorf("%w: nil failure function", ErrInvalid)
	case c.onExitSet && c.onExit == nil:
		return fmt.Errorf("%w: nil exit function", ErrInvalid)
	}
	return nil
}

// WithStdout sets where the processes' prefixed standard output lines go (default: discarded).
// The writer is used under a lock; pass the same *LockedWriter to other writers of the same
// destination (including WithStderr) so that their lines do not interleave.
func WithStdout(w io.Writer) Option { return func(c *config) { c.stdout = w } }

// WithStderr sets where the processes' prefixed standard error lines go (default: discarded).
// See WithStdout about sharing a destination.
func WithStderr(w io.Writer) Option { return func(c *config) { c.stderr = w } }

// WithEnv sets the function that gives the complete environment ("KEY=value" entries) of the
// process with the given launch index. The default is the launcher's own environment. A
// launcher uses it to tell each process its pool, size and index.
func WithEnv(env func(index int) []string) Option { return func(c *config) { c.env = env } }

// WithGrace sets how long stopped processes get between SIGTERM and SIGKILL (default
// DefaultGrace). Zero kills at once.
func WithGrace(d time.Duration) Option { return func(c *config) { c.grace = d } }

// WithMaxLine sets the longest output line kept whole, in bytes (default DefaultMaxLine).
func WithMaxLine(n int) Option { return func(c *config) { c.maxLine = n } }

// WithLogger sets the logger for starts, exits and stops (default zap.NewNop()).
func WithLogger(l *zap.Logger) Option { return func(c *config) { c.log = l } }

// WithOnFailure sets a function called once, from the goroutine that reaped the process, when
// the first process fails and the group starts stopping the others. A launcher uses it to tell
// the user at once why the pool is going down, rather than after the grace period. It must not
// block for long; Wait returns only after it has returned.
func WithOnFailure(f func(*ChildError)) Option {
	return func(c *config) { c.onFailure, c.onFailSet = f, true }
}

// WithOnExit sets a function called for every process when it has been reaped (its output
// copied), with its final status, from the goroutine that reaped it, before WithOnFailure's
// function. A caller that waits for something the processes must do first (join a pool) uses
// it to stop waiting as soon as one of them is gone, successful or not. It must not block
// for long; Wait returns only after it has returned.
func WithOnExit(f func(Status)) Option {
	return func(c *config) { c.onExit, c.onExitSet = f, true }
}
