package ipl

import (
	"context"
)

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
	// unique among this instance's send ports; "" picks one.
	CreateSendPort(pt PortType, name string, opts ...SendPortOption) (SendPort, error)
	// CreateReceivePort makes a receive port of a type declared to New. The name must
	// be unique among this instance's receive ports.
	CreateReceivePort(pt PortType, name string, opts ...ReceivePortOption) (ReceivePort, error)
	// Done is closed when the instance has ended.
	Done() <-chan struct{}
	// Close ends the instance; it is safe to call more than once. It returns when every
	// goroutine of the instance has ended, except when it is called while a handler runs
	// (a message, connection or event handler may call it): then the goroutines that run
	// handlers end as soon as the handlers return.
	Close() error
}

// Registry is the pool's shared state as seen from one member.
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
	// to New; it is closed when the instance ends.
	Events() <-chan Event
}
