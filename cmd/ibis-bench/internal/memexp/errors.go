package memexp

import "errors"

// Sentinel errors, matchable with errors.Is; the messages that wrap them
// say which parameter or which case was at fault.
var (
	// ErrInvalid reports a parameter or option out of range: an unknown
	// element type, a size that holds no element or exceeds MaxBytes, a
	// repetition count below one, and so on.
	ErrInvalid = errors.New("memexp: invalid parameter")

	// ErrMismatch reports a case whose data did not round-trip: the
	// encoded bytes differ from the reference encoding or the decoded
	// values differ from the originals. The timings of such a case would
	// measure a wrong result, so the experiment stops.
	ErrMismatch = errors.New("memexp: data did not round-trip")
)
