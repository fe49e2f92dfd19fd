package serialization

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error this package returns wraps at least one of
// them (or io.EOF), so callers can classify failures with errors.Is while the
// message text says exactly what went wrong.
var (
	// ErrCorrupt reports bytes that do not follow the wire format: a bad magic
	// byte, unknown flags, impossible counts, a packet over the configured
	// limits, a truncated packet, non-zero padding, or malformed object data.
	// When Next, Finish or a packet boundary reports it, the stream has lost
	// its framing and is unusable.
	ErrCorrupt = errors.New("serialization: corrupt stream")

	// ErrTypeMismatch reports a read that does not mirror the writes: a value
	// of one type was asked for while the packet holds unread values of
	// another, a 2-D destination has the wrong shape, or an object does not
	// fit the destination.
	ErrTypeMismatch = errors.New("serialization: type mismatch")

	// ErrShortMessage reports a read past the End of the message (or while no
	// message is open).
	ErrShortMessage = errors.New("serialization: read past end of message")

	// ErrTooLarge reports a message, packet or value over a configured limit.
	ErrTooLarge = errors.New("serialization: too large")

	// ErrUnsupported reports a call the stream's Kind does not allow, or a
	// value this package cannot serialize.
	ErrUnsupported = errors.New("serialization: unsupported")

	// ErrClosedByPeer reports that the peer sent a Close packet: it
	// disconnected cleanly and nothing more will arrive on this stream.
	ErrClosedByPeer = errors.New("serialization: connection closed by peer")
)

// corruptf returns an error wrapping ErrCorrupt with a formatted reason.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// mismatchf returns an error wrapping ErrTypeMismatch with a formatted reason.
func mismatchf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrTypeMismatch, fmt.Sprintf(format, args...))
}
