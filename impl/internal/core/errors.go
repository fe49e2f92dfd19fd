package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/serialization"
)

// dualError keeps the text of a serialization error while making it match the ipl
// sentinel of the same meaning, so programs need only test against ipl errors.
type dualError struct {
	sentinel error
	err      error
}

func (e *dualError) Error() string   { return e.err.Error() }
func (e *dualError) Unwrap() []error { return []error{e.sentinel, e.err} }

// streamError maps a serialization error onto the ipl sentinels. fatal reports whether
// the byte stream is no longer usable, so that the connection must be dropped.
func streamError(err error) (mapped error, fatal bool) {
	switch {
	case err == nil:
		return nil, false
	case errors.Is(err, serialization.ErrTypeMismatch), errors.Is(err, serialization.ErrShortMessage):
		return &dualError{ipl.ErrTypeMismatch, err}, false
	case errors.Is(err, serialization.ErrUnsupported):
		return &dualError{ipl.ErrUnsupported, err}, false
	case errors.Is(err, serialization.ErrTooLarge):
		return &dualError{ipl.ErrTooLarge, err}, true
	default:
		return &dualError{ipl.ErrConnectionLost, err}, true
	}
}

// writeError maps an error of the writing side; nothing there breaks the stream except
// the connections themselves, which the send port handles.
func writeError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, serialization.ErrUnsupported):
		return &dualError{ipl.ErrUnsupported, err}
	case errors.Is(err, serialization.ErrTooLarge):
		return &dualError{ipl.ErrTooLarge, err}
	default:
		return err
	}
}

// ctxError explains why a context ended, matching ipl.ErrTimeout for deadlines and
// ipl.ErrClosed when the instance or port ended.
func ctxError(ctx context.Context, what string) error {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, ipl.ErrClosed):
		return fmt.Errorf("%s: %w", what, ipl.ErrClosed)
	case ctx.Err() == nil, errors.Is(ctx.Err(), context.DeadlineExceeded):
		// (nil: the deadline passed and the context has not noticed yet.)
		return fmt.Errorf("%s: %w: %w", what, ipl.ErrTimeout, context.DeadlineExceeded)
	default:
		return fmt.Errorf("%s: %w", what, cause)
	}
}
