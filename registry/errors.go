package registry

import (
	"errors"

	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/ipl"
)

// Sentinel errors. Every error returned by this package that has one of these
// causes wraps it, so callers can test with errors.Is while the message still
// says what exactly went wrong.
var (
	// ErrPoolClosed means a join was refused because the closed-world pool
	// already has all its members, or because the pool has been terminated.
	ErrPoolClosed = errors.New("registry: pool closed")

	// ErrRegistryLost means the registry server cannot be reached: the
	// connection to it broke or it stopped answering (then the error wraps
	// the cause), it was never reached (Join gave up dialling), or the pool
	// is being rebuilt after a restart of the server. While a client tries
	// to rejoin a restarted server every call fails with it at once; after
	// a RegistryLost event whose Name begins with LostForGood the client
	// has ended and Err returns it. It is ipl.ErrRegistryLost.
	ErrRegistryLost = ipl.ErrRegistryLost

	// ErrDeclaredDead means the registry declared this member dead: it
	// heard nothing from it for its death timeout (the process was stopped,
	// starved or cut off that long), or its connection broke. The others
	// have heard Died and cut their connections to it, so the member
	// cannot go on: the client ends (Err, and the last RegistryLost event,
	// say so) and the process must rejoin as a new member, if at all. It
	// comes wrapped together with ErrRegistryLost.
	ErrDeclaredDead = errors.New("registry: this member was declared dead")

	// ErrClosed means the client has left the pool (Leave or Close) and can
	// no longer be used, or that a server has been closed.
	ErrClosed = errors.New("registry: closed")

	// ErrNotMember means the request needs a pool member that is not (or no
	// longer) in the pool: a signal target that left, or a request on a
	// connection that never joined.
	ErrNotMember = errors.New("registry: not a member")

	// ErrProtocol means bytes on the wire were not a valid registry frame or
	// message. Frame and message decoding errors wrap it.
	ErrProtocol = errors.New("registry: protocol error")

	// ErrVersion means client and server speak different protocol versions.
	ErrVersion = errors.New("registry: protocol version mismatch")

	// ErrPoolSize means a join asked for a different closed-world pool size
	// than the pool was created with.
	ErrPoolSize = errors.New("registry: pool size mismatch")

	// ErrNotClosedWorld means a closed-world operation (WaitUntilPoolClosed)
	// was used in an open-world pool, where it could never finish.
	ErrNotClosedWorld = errors.New("registry: pool is not a closed world")

	// ErrAlreadyBound means Bind was called for a global name that is bound.
	ErrAlreadyBound = errors.New("registry: name already bound")

	// ErrNotBound means Unbind was called for a name that is not bound by
	// the calling member.
	ErrNotBound = errors.New("registry: name not bound")

	// ErrInvalid means an argument was not acceptable (an empty name, a
	// string longer than MaxStringLength, a negative pool size, ...).
	ErrInvalid = errors.New("registry: invalid argument")

	// ErrTooLarge means a request would not fit in the server's maximum
	// frame size, so it was not sent.
	ErrTooLarge = errors.New("registry: request too large")

	// ErrTooManyRequests means a request would exceed one of the server's
	// resource limits: waiting requests (ElectionResult, Lookup) of one
	// member, bytes of names held by one member, or sequences, elections,
	// bound names or their bytes in one pool. The error's text says which
	// limit (see WithMaxWaitingRequests, WithMaxMemberNameBytes,
	// WithMaxPoolNames, WithMaxPoolNameBytes). A join refused because its
	// source address already holds too many members or pools
	// (WithMaxMembersPerSource, WithMaxPoolsPerSource) wraps it too.
	ErrTooManyRequests = errors.New("registry: too many requests")

	// ErrUnauthenticated means the pool check or TLS failed (see "Trust"
	// in the package doc): this client's secret is wrong or missing for the
	// pool (or a recorded handshake was replayed), the server has no
	// secret for a pool this client has one for (it cannot prove it
	// belongs to the pool), the server does not serve the pool, or a
	// certificate was not trusted by one side (or only one side speaks
	// TLS). The text says which. It is the same error as
	// ipl.ErrUnauthenticated; a client does not retry it.
	ErrUnauthenticated = poolauth.ErrUnauthenticated

	// ErrUnavailable means the registry front end is up but cannot reach
	// the store that holds the pools' state (see WithEtcdStore), so it
	// serves nobody until the store is back. An error with it also wraps
	// ErrRegistryLost: for the member the registry is out of reach. Join
	// and rejoin try again, at the next front end where there are several.
	ErrUnavailable = errors.New("registry: registry front end cannot reach its store")
)

// errBusy marks a connection that the server refused because too many
// connections (from its address, or in all) have not joined yet: an
// ErrTooManyRequests that a rejoin tries again.
var errBusy = errors.New("too many connections that have not joined")

// remoteError is an error reported by the server in a reply: it carries the
// server's explanation and unwraps to the matching sentinel.
type remoteError struct {
	sentinel error
	code     errCode
	msg      string
}

func (e *remoteError) Error() string { return e.msg }

// Unwrap gives the sentinel, and for ErrUnavailable ErrRegistryLost too.
func (e *remoteError) Unwrap() []error {
	if e.code == codeUnavailable {
		return []error{e.sentinel, ErrRegistryLost}
	}
	return []error{e.sentinel}
}
