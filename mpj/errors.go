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
	// ErrTruncated: a message holds more elements than the receive buffer has room for
	// (in Recv, in a collective: a Bcast buffer shorter than the root's, in Unpack), or
	// a collective's receive buffer is shorter than its arguments say it receives
	// (Gather's at the root, say). MPI calls this MPI_ERR_TRUNCATE; mpj never cuts a
	// message short silently. A message that does not fit is consumed (a later receive
	// does not see it again).
	ErrTruncated = errors.New("mpj: message truncated: receive buffer too small")
	// ErrOpenPool: Init was given an Ibis whose pool has no fixed size; ranks need a
	// closed world, as MPI_COMM_WORLD is fixed when the job starts.
	ErrOpenPool = errors.New("mpj: the pool is open (no pool size); mpj needs a closed world")
	// ErrRanks: the processes' launch ranks (IBIS_RANK, mp's MPI ranks or WithRank)
	// do not form the permutation 0..size-1, or only some processes have one.
	ErrRanks = errors.New("mpj: inconsistent launch ranks")
	// ErrCount: the ranks of a collective disagree on an element count and a rank
	// receives fewer elements than it expects (a Bcast buffer longer than the root's; a
	// shorter one is ErrTruncated), or a call's arguments disagree with each other (a
	// send buffer shorter than what it sends, a reduction's receive buffer of another
	// length than its send buffer, counts that do not fit the buffers or split MaxLoc's
	// pairs). Only the ranks that find a mismatch fail; a message's sender (Bcast's
	// root) does not.
	ErrCount = errors.New("mpj: element count mismatch")
	// ErrMalformed: packed data (Unpack) that is not what Pack writes: cut short, an
	// unknown element type, a count beyond the bytes there are.
	ErrMalformed = errors.New("mpj: malformed packed data")
)

// ErrTypeMismatch is ipl.ErrTypeMismatch: a receive buffer of another element type
// than the message's (a []int32 message received into a []float64) fails with an error
// matching it, as does a reduction operator that does not apply to the element type.
var ErrTypeMismatch = ipl.ErrTypeMismatch
