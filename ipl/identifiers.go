package ipl

import (
	"fmt"
	"strconv"
	"strings"
)

// IbisIdentifier names one Ibis instance (one member of a pool). The registry hands it
// out at join time; a send port needs it to find a receive port.
type IbisIdentifier struct {
	// Pool is the name of the pool the member joined.
	Pool string
	// ID is unique in the pool: the member's join number in decimal ("0", "1", ...).
	// Join numbers are never reused while the pool exists.
	ID string
	// Address is where the member's implementation accepts connections. Its form is
	// the implementation's business; the registry and ipl do not look inside.
	Address string
	// Tag is the user's tag for this member (may be empty).
	Tag string
}

// String returns a short human-readable form, "pool/3@127.0.0.1:4567", or "pool/3"
// when the member has no address. It is meant for logs and errors, not for parsing.
func (i IbisIdentifier) String() string {
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

// Number returns the member's join number (ID parsed), which gives members a natural
// rank order; -1 when ID is not a join number, as in the zero IbisIdentifier.
func (i IbisIdentifier) Number() int {
	n, err := strconv.Atoi(i.ID)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// IsZero reports whether i is the zero IbisIdentifier (names no member).
func (i IbisIdentifier) IsZero() bool { return i == IbisIdentifier{} }

// ReceivePortIdentifier names a receive port: its Ibis instance and its name, which is
// unique within that instance.
type ReceivePortIdentifier struct {
	Ibis IbisIdentifier
	Name string
}

// String prints the port as name@ibis.
func (r ReceivePortIdentifier) String() string { return fmt.Sprintf("%s@%s", r.Name, r.Ibis) }

// SendPortIdentifier names a send port: its Ibis instance and its name.
type SendPortIdentifier struct {
	Ibis IbisIdentifier
	Name string
}

// String prints the port as name@ibis.
func (s SendPortIdentifier) String() string { return fmt.Sprintf("%s@%s", s.Name, s.Ibis) }
