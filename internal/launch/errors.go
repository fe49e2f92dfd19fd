package launch

import (
	"errors"
	"fmt"
)

// Sentinel errors returned by this package, matchable with errors.Is, so that a caller can
// choose an exit code or a message without parsing error strings.
var (
	// ErrInvalid reports a Spec or option value that cannot work, such as a group of zero
	// processes or an empty program name.
	ErrInvalid = errors.New("launch: invalid argument")
	// ErrStart reports that the program could not be started (not found, not executable,
	// fork failed). Processes already started were killed and reaped before it is returned.
	ErrStart = errors.New("launch: cannot start program")
	// ErrChildFailed reports that a process exited with a non-zero status or was killed by a
	// signal before the group was asked to stop. The error is a *ChildError that tells which
	// process failed and how.
	ErrChildFailed = errors.New("launch: process failed")
	// ErrStopped reports that the group was stopped by Stop or Kill (an interrupt, a timeout)
	// before any process failed on its own.
	ErrStopped = errors.New("launch: group stopped")
)

// ChildError describes the first process of a group that failed. It exists so that a launcher
// can exit with that process's exit code and name the process in its message.
type ChildError struct {
	// Status is the failed process's final state, including its launch index.
	Status Status
}

// Error describes the failure in the words a user of mpirun would expect.
func (e *ChildError) Error() string {
	return fmt.Sprintf("process %d %s", e.Status.Index, e.Status.describe())
}

// Is makes errors.Is(err, ErrChildFailed) true for every *ChildError.
func (e *ChildError) Is(target error) bool { return target == ErrChildFailed }

// Unwrap returns the underlying I/O error, if the failure was one, so that errors.Is can see it.
func (e *ChildError) Unwrap() error { return e.Status.Err }
