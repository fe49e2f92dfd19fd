package ipl

import "fmt"

// EventType tells what an Event is about. The zero value is not a valid event type, so
// a forgotten assignment shows up as "EventType(0)".
type EventType int

// The pool's event types, then the two events about this member's own link to the
// registry server.
const (
	// EventJoined: Member joined the pool.
	EventJoined EventType = iota + 1
	// EventLeft: Member left the pool cleanly (Close).
	EventLeft
	// EventDied: Member's connection to the registry broke, or nothing came from it
	// for the registry's death timeout.
	EventDied
	// EventSignal: Member sent the signal text Name to this member.
	EventSignal
	// EventElected: Member won the election Name.
	EventElected
	// EventPoolClosed: a closed-world pool has all its members; Member is the last
	// one to join.
	EventPoolClosed
	// EventTerminated: Member ended the run of the pool (Terminate).
	EventTerminated
	// EventRegistryLost: the registry server cannot be reached any more. It is this
	// member's own news, not a pool event: Seq is 0 and Member is this member. Name
	// says why and begins with LostReconnecting while the instance tries to rejoin
	// (with back-off, until Close) or LostForGood when it has given up (LostDeclaredDead
	// when the registry declared this member dead). Registry calls fail with
	// ErrRegistryLost until EventRegistryRestored; ports keep working.
	EventRegistryLost
	// EventRegistryRestored: the instance rejoined a restarted registry server with the
	// same identifier, elections and global names; the pool's events it had missed
	// (members that died meanwhile, or joined) come before it. Seq is 0 and Member is
	// this member.
	EventRegistryRestored
)

// Prefixes of the Name of an EventRegistryLost event.
const (
	// LostReconnecting starts the Name when the instance tries to rejoin.
	LostReconnecting = "reconnecting: "
	// LostForGood starts the Name when the instance has given up: registry calls fail
	// with ErrRegistryLost for good.
	LostForGood = "for good: "
	// LostDeclaredDead starts the Name when the registry declared this member dead;
	// it begins with LostForGood.
	LostDeclaredDead = LostForGood + "declared dead: "
)

var eventTypeNames = [...]string{
	EventJoined:     "Joined",
	EventLeft:       "Left",
	EventDied:       "Died",
	EventSignal:     "Signal",
	EventElected:    "Elected",
	EventPoolClosed: "PoolClosed",
	EventTerminated: "Terminated",

	EventRegistryLost:     "RegistryLost",
	EventRegistryRestored: "RegistryRestored",
}

// String returns the name of the event type, such as "Joined".
func (t EventType) String() string {
	if t >= EventJoined && t <= EventRegistryRestored {
		return eventTypeNames[t]
	}
	return fmt.Sprintf("EventType(%d)", int(t))
}

// Event is one registry event: a member joined, left or died, a signal, an election
// result, the pool closing or the run terminating. All members see the events addressed
// to them in one total order; a signal goes only to its targets, so a member may see
// gaps in Seq.
type Event struct {
	// Seq is the position in the pool's total order (starting at 1).
	Seq uint64
	// Type says what happened.
	Type EventType
	// Member is who joined, left, died, was elected, sent the signal, completed the
	// closed-world pool or terminated the run.
	Member IbisIdentifier
	// Name is the election name (EventElected) or the signal text (EventSignal).
	Name string
}

// String formats the event for logs, e.g. `#4 Elected pool/1@host:9 "master"`.
func (e Event) String() string {
	s := fmt.Sprintf("#%d %s %s", e.Seq, e.Type, e.Member)
	if e.Name != "" {
		s += " " + fmt.Sprintf("%q", e.Name)
	}
	return s
}
