package mpj

import (
	"errors"

	"github.com/ibisgo/ibis/ipl"
)

// Sentinel errors of mpj. Errors returned by mpj wrap one of these, or one of the ipl
// sentinels (ipl.ErrClosed, ipl.ErrTimeout, ipl.ErrInvalidArgument, ipl.ErrTypeMismatch,
// ipl.ErrUnsupported, ipl.ErrConnectionLost, ...), so that a program can react with
// errors.Is while the message says what happened.
var (
	// ErrTruncated: a message holds more elements than the receive buffer has room for.
	// MPI calls this MPI_ERR_TRUNCATE; mpj never cuts a message short silently. The
	// message is consumed (a later receive does not see it again).
	ErrTruncated = errors.New("mpj: message truncated: receive buffer too small")
	// ErrOpenPool: Init was given an Ibis whose pool has no fixed size; ranks need a
	// closed world, as MPI_COMM_WORLD is fixed when the job starts.
	ErrOpenPool = errors.New("mpj: the pool is open (no pool size); mpj needs a closed world")
	// ErrRanks: the processes' launch ranks (IBIS_RANK, mp's MPI ranks or WithRank)
	// do not form the permutation 0..size-1, or only some processes have one.
	ErrRanks = errors.New("mpj: inconsistent launch ranks")
	// ErrCount: the ranks of a collective disagree on an element count (for example a
	// Bcast buffer of another length than the root's), or a buffer holds another number
	// of elements than the call says (a send buffer shorter than what it sends).
	ErrCount = errors.New("mpj: element count mismatch")
	// ErrMalformed: packed data (Unpack) that is not what Pack writes: cut short, an
	// unknown element type, a count beyond the bytes there are.
	ErrMalformed = errors.New("mpj: malformed packed data")
)

// ErrTypeMismatch is ipl.ErrTypeMismatch: a receive buffer of another element type
// than the message's (a []int32 message received into a []float64) fails with an error
// matching it, as does a reduction operator that does not apply to the element type.
var ErrTypeMismatch = ipl.ErrTypeMismatch
