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
	// Died: Member's connection broke, or nothing came from it for the
	// server's death timeout.
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
	// RegistryLost: this member lost its connection to the registry server
	// (it broke, or the server stopped answering). It is not one of the
	// pool's events but this member's own news: Seq is 0 and Member is
	// this member. Name says why and what happens next: it begins with
	// LostReconnecting while the client tries to rejoin a restarted server
	// (with back-off, until Close or the reconnect limit), or with
	// LostForGood when the client has given up and ended (the server
	// cannot be restarted, the limit passed, or the restarted server no
	// longer counts this member in its pool); with LostDeclaredDead when
	// the registry declared this member dead. Until RegistryRestored every
	// call that needs the server fails with ErrRegistryLost; Members keeps
	// the last membership known.
	RegistryLost
	// RegistryRestored: this member is back in its pool at a restarted
	// server, with the same Identifier, its elections won, its global
	// names and the pool's sequences; members that did not come back are
	// reported Died (after the server's recovery grace period), members
	// this one had not heard of are reported Joined, both before this
	// event. Seq is 0 and Member is this member.
	RegistryRestored
)

// Prefixes of the Name of a RegistryLost event.
const (
	// LostReconnecting starts the Name of a RegistryLost event after which
	// the client tries to reconnect.
	LostReconnecting = "reconnecting: "
	// LostForGood starts the Name of a RegistryLost event after which the
	// client has ended: registry calls fail with ErrRegistryLost for good.
	LostForGood = "for good: "
	// LostDeclaredDead starts the Name of the last RegistryLost event when
	// the client ended because the registry declared this member dead (Err
	// then matches ErrDeclaredDead); it begins with LostForGood.
	LostDeclaredDead = LostForGood + "declared dead: "
)

var eventTypeNames = [...]string{
	Joined:     "Joined",
	Left:       "Left",
	Died:       "Died",
	Signal:     "Signal",
	Elected:    "Elected",
	PoolClosed: "PoolClosed",
	Terminated: "Terminated",

	RegistryLost:     "RegistryLost",
	RegistryRestored: "RegistryRestored",
}

// String returns the name of the event type, such as "Joined".
func (t EventType) String() string {
	if t >= Joined && t <= RegistryRestored {
		return eventTypeNames[t]
	}
	return fmt.Sprintf("EventType(%d)", int(t))
}

// valid reports whether t is a pool event, one a server may send: the
// RegistryLost and RegistryRestored events are made by the client itself.
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
