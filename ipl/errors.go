package ipl

import "errors"

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
	// ErrTooLarge: a message exceeds the configured maximum size.
	ErrTooLarge = errors.New("ipl: message too large")
)
