package ipl

import "context"

// Ibis is one instance of Ibis-Go in a pool: the factory of ports and the holder of
// the registry membership. Close ends it: every port closes, every blocking call returns
// and the instance leaves the pool.
type Ibis interface {
	// Identifier names this instance; peers use it to connect to its receive ports.
	Identifier() IbisIdentifier
	// Implementation returns the short name of the implementation in use ("tcp", ...).
	Implementation() string
	// Registry gives access to pool membership, elections, signals and termination.
	Registry() Registry
	// CreateSendPort makes a send port of a type declared to New. The name must be
	// unique among this instance's send ports, at most MaxPortName bytes; "" picks one.
	CreateSendPort(pt PortType, name string, opts ...SendPortOption) (SendPort, error)
	// CreateReceivePort makes a receive port of a type declared to New. The name must
	// be unique among this instance's receive ports, 1 to MaxPortName bytes (else
	// ErrInvalidArgument). ctx bounds the one step that may
	// wait, publishing a Global port's name in the registry (the connect timeout when
	// ctx has no deadline); a port that could not be published is not made.
	CreateReceivePort(ctx context.Context, pt PortType, name string, opts ...ReceivePortOption) (ReceivePort, error)
	// Done is closed when the instance has ended: its ports are closed and it has
	// left the pool. Handlers may still be running; Wait waits for them.
	Done() <-chan struct{}
	// Close ends the instance; it is safe to call more than once, also from a handler
	// (a message, connection, disconnect or event handler). It returns when the
	// instance's own goroutines have ended, but does not wait for the handlers running
	// at that moment: their blocking calls on the instance return ErrClosed, they get
	// no further call, and they end when they return. Errors met while shutting down
	// are joined into the result.
	Close() error
	// Wait waits until the instance has ended and every handler it ran has returned.
	// A handler still running when ctx ends is named in an error matching ErrTimeout.
	// Before any Close it waits for one. A handler must not call it: it would wait for
	// itself until ctx ends.
	Wait(ctx context.Context) error
}

// Registry is the pool's shared state as seen from one member.
//
// Errors: every method's error matches an ipl sentinel with errors.Is: ErrTimeout when
// its context's deadline passed (together with context.DeadlineExceeded), ErrClosed when
// the instance is closing or closed, ErrRegistryLost while the registry server cannot be
// reached, ErrUnsupported for a closed-world call in an open-world pool (no
// closed.world), ErrInvalidArgument for an empty or too long name, ErrNotMember for a
// signal to a member that is not in the pool, ErrTooLarge for a request beyond the
// server's limits. A context the caller cancelled gives context.Canceled.
//
// A lost registry server is a failure of its own, not the instance's: the instance, its
// ports and their connections go on, and the program gets EventRegistryLost. When the
// server can be restarted (a stand-alone ibis-registry) the instance rejoins it on its
// own, keeping its identifier, the elections it won and its global names, and the
// program gets EventRegistryRestored; members that did not come back are reported
// EventDied. An embedded registry cannot come back: its loss is final.
type Registry interface {
	// Members lists the pool's current members in join order.
	Members() []IbisIdentifier
	// PoolSize returns the size of a closed-world pool, or 0.
	PoolSize() int
	// WaitUntilPoolClosed waits until every member of a closed-world pool has joined.
	WaitUntilPoolClosed(ctx context.Context) error
	// Elect stands as candidate in the named election and returns its winner.
	Elect(ctx context.Context, election string) (IbisIdentifier, error)
	// ElectionResult waits until the named election has a winner.
	ElectionResult(ctx context.Context, election string) (IbisIdentifier, error)
	// Signal sends a signal to the given members.
	Signal(ctx context.Context, signal string, to ...IbisIdentifier) error
	// Terminate ends the run for the whole pool.
	Terminate(ctx context.Context) error
	// WaitUntilTerminated waits until some member calls Terminate.
	WaitUntilTerminated(ctx context.Context) error
	// Sequence draws the next number (0, 1, ...) of a pool-wide named counter.
	Sequence(ctx context.Context, name string) (int64, error)
	// Events delivers registry events in total order when no event handler was given
	// to New; it is closed when the instance ends. Besides the pool's events it carries
	// this member's EventRegistryLost and EventRegistryRestored.
	Events() <-chan Event
}
