package registry

import (
	"strconv"
	"strings"
)

// Identifier names one member of a pool. The registry hands it out at join
// time; the other layers use it to tell members apart and to find the
// address where a member's implementation accepts connections.
type Identifier struct {
	// Pool is the name of the pool the member joined.
	Pool string
	// ID is unique in the pool: the member's join number in decimal ("0",
	// "1", ...). Join numbers are never reused while the pool exists.
	ID string
	// Address is opaque to the registry: where the member's implementation
	// accepts connections, as given with WithAddress.
	Address string
	// Tag is the user's tag for this member (may be empty), as given with
	// WithTag.
	Tag string
}

// String returns a short human-readable form, "pool/3@127.0.0.1:4567", or
// "pool/3" when the member has no address. It is meant for logs and error
// messages, not for parsing.
func (i Identifier) String() string {
	var b strings.Builder
	b.Grow(len(i.Pool) + len(i.ID) + len(i.Address) + 2)
	b.WriteString(i.Pool)
	b.WriteByte('/')
	b.WriteString(i.ID)
	if i.Address != "" {
		b.WriteByte('@')
		b.WriteString(i.Address)
	}
	return b.String()
}

// Number returns the member's join number (ID parsed), which gives members a
// natural rank order. It returns -1 for an Identifier whose ID is not a
// join number, such as the zero Identifier.
func (i Identifier) Number() int {
	n, err := strconv.Atoi(i.ID)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// IsZero reports whether i is the zero Identifier (names no member).
func (i Identifier) IsZero() bool { return i == Identifier{} }
