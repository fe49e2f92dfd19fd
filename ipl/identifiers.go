package ipl

import (
	"fmt"

	"github.com/ibisgo/ibis/registry"
)

// IbisIdentifier names one Ibis instance (one member of a pool). It is handed out by
// the registry at join time and is what a send port needs to find a receive port.
type IbisIdentifier = registry.Identifier

// Event is one registry event: a member joined, left or died, a signal, an election
// result, the pool closing or the run terminating. Events come in one total order.
type Event = registry.Event

// EventType tells what an Event is about.
type EventType = registry.EventType

// The registry event types, re-exported so that programs need only import ipl.
const (
	EventJoined     = registry.Joined
	EventLeft       = registry.Left
	EventDied       = registry.Died
	EventSignal     = registry.Signal
	EventElected    = registry.Elected
	EventPoolClosed = registry.PoolClosed
	EventTerminated = registry.Terminated
)

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
