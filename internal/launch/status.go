package launch

import (
	"fmt"
	"os"
)

// Status is the final state of one process of a group. Wait returns one per launch index so
// that a caller can report every process, not only the one that failed first.
type Status struct {
	// Index is the process's launch index, 0 to N-1.
	Index int
	// Started is false for a process that was never started because the group was already
	// stopping when its turn came.
	Started bool
	// Pid is the operating system's process id, 0 when the process was not started.
	Pid int
	// ExitCode is the status the process passed to exit, or -1 when it did not exit normally
	// (killed by a signal, or never started).
	ExitCode int
	// Signal is the signal that killed the process, nil when it exited normally.
	Signal os.Signal
	// Err is an error seen while copying the process's output (for example the group's output
	// could no longer be written), nil otherwise. A process whose output was lost counts as
	// failed even when it exited with status 0.
	Err error
}

// Failed reports whether the process ran and did not succeed: a non-zero exit status, death
// by a signal, or lost output.
func (s Status) Failed() bool {
	return s.Started && (s.ExitCode != 0 || s.Signal != nil || s.Err != nil)
}

// Code is the exit code a shell would report for the process: its exit status, 128 plus the
// signal number when a signal killed it, 1 when only its output was lost, 0 otherwise. A
// launcher exits with the Code of the first failed process.
func (s Status) Code() int {
	switch {
	case s.Signal != nil:
		return 128 + signalNumber(s.Signal)
	case s.ExitCode > 0:
		return s.ExitCode
	case s.Started && s.Err != nil:
		return 1
	default:
		return 0
	}
}

// describe says what happened to the process, for ChildError and log messages.
func (s Status) describe() string {
	switch {
	case !s.Started:
		return "was not started"
	case s.Signal != nil:
		return fmt.Sprintf("was killed by signal %d (%v)", signalNumber(s.Signal), s.Signal)
	case s.ExitCode != 0:
		return fmt.Sprintf("exited with status %d", s.ExitCode)
	case s.Err != nil:
		return fmt.Sprintf("lost output: %v", s.Err)
	default:
		return "exited with status 0"
	}
}
