package ipl

import (
	"errors"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// Sentinel errors. Every error an Ibis-Go call returns wraps one of these where one
// applies, with a message that tells the user what they did, so that programs can react
// with errors.Is and people can read what happened.
var (
	// ErrInvalidPortType: a port type's capabilities do not make a valid set.
	ErrInvalidPortType = errors.New("ipl: invalid port type")
	// ErrNoImplementation: no implementation offers what was asked.
	ErrNoImplementation = errors.New("ipl: no implementation")
	// ErrTimeout: a blocking call ran out of time.
	ErrTimeout = errors.New("ipl: timeout")
	// ErrClosed: the port or Ibis instance has been closed.
	ErrClosed = errors.New("ipl: closed")
	// ErrRefused: the peer could not be reached.
	ErrRefused = errors.New("ipl: connection refused")
	// ErrDenied: the receive port's connection handler refused the connection.
	ErrDenied = errors.New("ipl: connection denied")
	// ErrDisabled: the receive port does not accept connections (yet).
	ErrDisabled = errors.New("ipl: connections disabled")
	// ErrTypeMismatch: the send and receive port types differ, or a read did not match
	// what was written.
	ErrTypeMismatch = errors.New("ipl: type mismatch")
	// ErrAlreadyConnected: the send port is already connected to that receive port.
	ErrAlreadyConnected = errors.New("ipl: already connected")
	// ErrNoSuchPort: the peer has no receive port of that name.
	ErrNoSuchPort = errors.New("ipl: no such port")
	// ErrNotManyToOne: the receive port already has a sender and its type does not allow more.
	ErrNotManyToOne = errors.New("ipl: receive port is not many-to-x")
	// ErrNotOneToMany: the send port already has a receiver and its type does not allow more.
	ErrNotOneToMany = errors.New("ipl: send port is not x-to-many")
	// ErrNotConnected: a message was asked of a send port with no connection.
	ErrNotConnected = errors.New("ipl: not connected")
	// ErrConnectionLost: a connection broke; what was in flight on it may be lost.
	ErrConnectionLost = errors.New("ipl: connection lost")
	// ErrUnsupported: the port type or implementation does not offer the call.
	ErrUnsupported = errors.New("ipl: unsupported")
	// ErrMessageFinished: the message was used after Finish.
	ErrMessageFinished = errors.New("ipl: message already finished")
	// ErrPortExists: a port of that name already exists in this Ibis instance.
	ErrPortExists = errors.New("ipl: port exists")
	// ErrTooLarge: a message exceeds the configured maximum size, or a registry request
	// exceeds a limit of the registry server (frame size, waiting requests, names held).
	ErrTooLarge = errors.New("ipl: message too large")
	// ErrRegistryLost: the registry server cannot be reached: the connection to it broke
	// or it stopped answering, it was never reached (New gave up joining), or the pool is
	// being rebuilt after the server restarted. Registry calls fail with it at once while
	// the instance waits to rejoin (between EventRegistryLost and EventRegistryRestored),
	// and for good after an EventRegistryLost whose Name begins with
	// LostForGood. Ports and their connections are not affected. The registry package's
	// ErrRegistryLost is this error, so errors from that package match it too.
	ErrRegistryLost = errors.New("registry: connection to the registry lost")
	// ErrInvalidArgument: an argument was not acceptable (an empty or too long name).
	ErrInvalidArgument = errors.New("ipl: invalid argument")
	// ErrNotMember: the call names a pool member that is not (or no longer) in the pool,
	// such as a signal to a member that left.
	ErrNotMember = errors.New("ipl: not a pool member")
	// ErrStalled: a peer stopped in the middle of a message for longer than the message
	// timeout (see WithMessageTimeout), or was declared dead by the registry; its
	// connection was cut so that it holds up nobody else. Errors that match it also
	// match ErrConnectionLost.
	ErrStalled = errors.New("ipl: peer stalled")
	// ErrUnauthenticated: a peer or the registry could not prove it knows the pool's
	// secret, or this process has none where the pool requires one (WithPoolSecret).
	ErrUnauthenticated = poolauth.ErrUnauthenticated
)
