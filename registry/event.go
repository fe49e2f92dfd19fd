package registry

import "github.com/ibisgo/ibis/ipl"

// EventType says what happened in a pool: ipl's EventType.
type EventType = ipl.EventType

// Event is one entry of a pool's totally ordered event list: ipl's Event.
type Event = ipl.Event

// The event types under the registry's own names (ipl's EventJoined and following say
// what each means). RegistryLost and RegistryRestored are made by the client itself:
// after RegistryLost every call that needs the server fails with ErrRegistryLost until
// RegistryRestored, and Members keeps the last membership known; members that did not
// come back to a restarted server are reported Died (after its recovery grace period)
// before RegistryRestored.
const (
	Joined           = ipl.EventJoined
	Left             = ipl.EventLeft
	Died             = ipl.EventDied
	Signal           = ipl.EventSignal
	Elected          = ipl.EventElected
	PoolClosed       = ipl.EventPoolClosed
	Terminated       = ipl.EventTerminated
	RegistryLost     = ipl.EventRegistryLost
	RegistryRestored = ipl.EventRegistryRestored
)

// Prefixes of the Name of a RegistryLost event (ipl's LostReconnecting and following).
// LostDeclaredDead's event comes with an Err that matches ErrDeclaredDead.
const (
	LostReconnecting = ipl.LostReconnecting
	LostForGood      = ipl.LostForGood
	LostDeclaredDead = ipl.LostDeclaredDead
)

// poolEvent reports whether t is a pool event, one a server may send: the RegistryLost
// and RegistryRestored events are made by the client itself.
func poolEvent(t EventType) bool { return t >= Joined && t <= Terminated }
