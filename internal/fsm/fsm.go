// Package fsm is the one helper the runtime's small state machines share (nio's
// connections, core's push inbox, ...). A state is a small unsigned type whose values are
// named in a table and whose legal moves its CanMove method lists, next to a comment that
// draws them; every change of such a state goes through Move, so the transitions live in
// one place per type and a move the table lacks is caught where it is made.
package fsm

import "fmt"

// State is a state type: a small enumeration that says which moves are legal.
type State[S any] interface {
	~uint8
	// CanMove reports whether the state may change from the receiver to next.
	CanMove(next S) bool
}

// Move sets *cur to next if cur's type allows the move, and reports whether it did. A
// refused move changes nothing; what a refusal means (a second close to ignore, a bug
// to log) is the caller's to say.
func Move[S State[S]](cur *S, next S) bool {
	if !(*cur).CanMove(next) {
		return false
	}
	*cur = next
	return true
}

// Name names the value s of a state type for logs and errors: names[s], or kind(s) for
// a value without a name (a bug elsewhere that a log line should still show).
func Name[S ~uint8](names []string, s S, kind string) string {
	if int(s) < len(names) && names[s] != "" {
		return names[s]
	}
	return fmt.Sprintf("%s(%d)", kind, uint8(s))
}
