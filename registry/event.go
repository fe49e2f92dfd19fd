package registry

import "fmt"

// EventType says what happened in a pool.
type EventType int

// The event types, in no particular order. The zero value is not a valid
// event type, so a forgotten assignment shows up as "EventType(0)".
const (
	// Joined: Member joined the pool.
	Joined EventType = iota + 1
	// Left: Member left the pool cleanly (Leave or Close).
	Left
	// Died: Member's connection broke or its heartbeats stopped.
	Died
	// Signal: Member sent the signal text Name to this member.
	Signal
	// Elected: Member won the election Name.
	Elected
	// PoolClosed: a closed-world pool has all its members; Member is the
	// last one to join.
	PoolClosed
	// Terminated: Member ended the run of the pool (Terminate).
	Terminated
)

var eventTypeNames = [...]string{
	Joined:     "Joined",
	Left:       "Left",
	Died:       "Died",
	Signal:     "Signal",
	Elected:    "Elected",
	PoolClosed: "PoolClosed",
	Terminated: "Terminated",
}

// String returns the name of the event type, such as "Joined".
func (t EventType) String() string {
	if t.valid() {
		return eventTypeNames[t]
	}
	return fmt.Sprintf("EventType(%d)", int(t))
}

func (t EventType) valid() bool { return t >= Joined && t <= Terminated }

// Event is one entry of a pool's totally ordered event list. All members see
// the events addressed to them in the same order; a signal goes only to its
// targets, so a member may see gaps in Seq.
type Event struct {
	// Seq is the position in the pool's total order (starting at 1).
	Seq uint64
	// Type says what happened.
	Type EventType
	// Member is who joined, left, died, was elected, sent the signal,
	// completed the closed-world pool or terminated the run.
	Member Identifier
	// Name is the election name (Elected) or the signal text (Signal).
	Name string
}

// String formats the event for logs, e.g. "#4 Elected pool/1@host:9 master".
func (e Event) String() string {
	s := fmt.Sprintf("#%d %s %s", e.Seq, e.Type, e.Member)
	if e.Name != "" {
		s += " " + fmt.Sprintf("%q", e.Name)
	}
	return s
}
