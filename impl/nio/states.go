package nio

import "fmt"

// stateName names the value s of a state type: names[s], or kind(s) when the value
// has no name (a bug elsewhere that a log line should still show).
func stateName[S ~uint8](names []string, s S, kind string) string {
	if int(s) < len(names) && names[s] != "" {
		return names[s]
	}
	return fmt.Sprintf("%s(%d)", kind, uint8(s))
}

// state is a state type whose legal moves canBecome lists.
type state[S any] interface {
	~uint8
	canBecome(next S) bool
}

// move sets *cur to next if cur's state type allows the move, and reports whether it
// did: every change of outState and inState goes through here.
func move[S state[S]](cur *S, next S) bool {
	if !(*cur).canBecome(next) {
		return false
	}
	*cur = next
	return true
}
