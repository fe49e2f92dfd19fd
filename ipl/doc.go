// Package ipl is the Ibis portability layer: the contract between programs and the
// interchangeable communication implementations of Ibis-Go.
//
// A program creates an Ibis instance with New, declaring the capabilities it needs and
// the port types it will use. New picks an implementation (blocking TCP, an event loop,
// MPI, ...) by name or by capability match, joins the pool through the registry and
// returns an Ibis. The program then creates typed send and receive ports, connects them
// across processes by (Ibis identifier, port name) or by a port's global name, and moves
// messages holding primitive values, typed slices, 2-D slices and objects.
//
// Implementations live in other packages and link themselves in with a blank import, in
// the way database/sql drivers do:
//
//	import _ "github.com/ibisgo/ibis/impl/tcp"
//
// The rules every implementation keeps (and the conformance suite under test/ checks):
//   - at most one live message per send port and per receive port (a receive port made
//     with WithConcurrentUpcalls: one per concurrent upcall, each from another connection);
//   - an upcall owns its message until it returns or finishes the message early;
//   - messages on a connection arrive in the order they were sent (FIFO per connection);
//   - a multicast reaches every connected receive port;
//   - a many-to-one receive port delivers every message from every sender;
//   - every blocking call takes a context.Context and ends when the Ibis ends;
//   - errors are matchable with errors.Is against the sentinels of this package.
package ipl
