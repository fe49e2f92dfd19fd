// Package registry lets the processes of an Ibis pool find each other.
//
// A central Server (run by cmd/ibis-registry, or embedded in a launcher with
// StartEmbedded) holds pools by name. Every Ibis instance holds a Client,
// made by Join, through which it
//
//   - joins a pool and learns its members, and hears of joins, clean leaves
//     and deaths in one total order (Events, WithEventHandler, Members);
//   - elects leaders (Elect, ElectionResult; strict: all agree);
//   - signals other members (Signal);
//   - waits for a closed-world pool to fill (WithPoolSize,
//     WaitUntilPoolClosed);
//   - ends a run (Terminate, WaitUntilTerminated);
//   - draws sequence numbers (Sequence);
//   - publishes and finds global names of receive ports (Bind, Lookup,
//     Unbind).
//
// Java Ibis's central registry is the model.
//
// # Failure detection
//
// The server announces its heartbeat interval I in the join reply. The
// client sends a heartbeat frame every I/2; the server declares a member
// Died when its connection breaks without a leave, or when nothing arrived
// from it for 1.5*I, so every other member hears of a crashed (even
// SIGKILLed, or silently partitioned) member within 2*I. The server sends a
// ping every I/2 too; a client that hears nothing for 3*I, or whose
// connection breaks, ends with ErrRegistryLost, and so do all its blocking
// calls.
//
// A member that leaves or dies loses the elections it won (a later Elect can
// win anew), its bound names, and its waiting requests. A pool whose last
// member is gone is forgotten, so its name can be used afresh.
//
// Join waits at most 3*DefaultHeartbeatInterval for the join reply once it
// has connected (the server answers at once); a server silent that long
// makes Join fail with ErrRegistryLost. Two Close calls (or Leave and Close)
// at once are safe: the later one waits, as briefly as Close does, for the
// leave under way, so the others see Left rather than Died.
//
// # Limits
//
// One member must not be able to grow the server's memory without bound,
// so the server caps what each member and each pool may hold (ServerOptions;
// the defaults are generous for real runs). A request that would exceed a
// limit fails with ErrTooManyRequests, its text naming the limit; nothing
// else changes:
//
//   - waiting requests (ElectionResult, Lookup) per member:
//     WithMaxWaitingRequests, default 10000;
//   - bytes of names one member holds (names of its waiting requests, bound
//     names and their port names, names of elections it won):
//     WithMaxMemberNameBytes, default 4 MiB;
//   - sequences, elections with a winner, and bound names per pool, each:
//     WithMaxPoolNames, default 10000;
//   - bytes of those names (and port names) per pool, together:
//     WithMaxPoolNameBytes, default 16 MiB.
//
// Sequences last as long as their pool; the other names are released as
// requests are answered or cancelled, names unbound, and members gone.
// Besides, the bytes queued for a client that does not read are capped
// (WithMaxQueuedBytes, 64 MiB: the client is disconnected), and so are the
// connections that have not joined yet (WithMaxUnjoinedConnections, 1024:
// further ones are closed at once). A connection must join within 1.5*I of
// being accepted.
//
// # Wire protocol
//
// The protocol runs over one TCP connection per client. Both directions
// carry frames: a big-endian uint32 body length followed by that many bytes
// of body. A length of 0 or above the receiver's maximum (DefaultMaxFrameSize,
// 1 MiB, unless WithMaxFrameSize says otherwise on the server) is a protocol
// error, detected before memory is allocated; the connection is then closed
// and the reason logged. The server tells its maximum in the join reply, and
// the client refuses to send larger requests (ErrTooLarge).
//
// A body is one msgpack map from short string keys to values; keys with
// zero values are left out, and unknown keys are skipped, so later versions
// can add fields. The keys are:
//
//	k    uint    message kind (below)
//	i    uint    request id, chosen by the client, unique per connection and
//	             non-zero; a reply carries the id of its request
//	v    uint    protocol version (join); ProtocolVersion, currently 1
//	p    str     pool name (join)
//	n    int     closed-world pool size, 0 = open world (join, join reply)
//	a    str     member address (join)
//	t    str     member tag (join)
//	s    str     election name, signal text, sequence name or global name
//	o    str     port name (bind, lookup reply)
//	to   [str]   member IDs a signal goes to; absent = every member
//	m    ident   a member: own identity (join reply), election winner
//	             (elect, election-result replies), name owner (lookup reply)
//	e    event   the event of an event message
//	x    int     sequence number (sequence reply)
//	h    int     heartbeat interval in nanoseconds (join reply)
//	f    int     the server's maximum frame size (join reply)
//	c    uint    error code of an error reply (below)
//	err  str     what went wrong (error reply)
//
// An ident is the array [pool, id, address, tag] of four strings. An event
// is the array [seq uint, type int, member ident, name str] with the type
// numbered as EventType (Joined = 1 ... Terminated = 7). Strings are at most
// MaxStringLength bytes.
//
// Message kinds, client to server (all but heartbeat and cancel get exactly
// one reply):
//
//	1  join             v, p, n, a, t. Reply: m, n, h, f. Before the reply
//	                    the server sends the Joined events of the members
//	                    already present (with their original seq), then the
//	                    new member's own Joined event (and PoolClosed if it
//	                    completes a closed world).
//	2  leave            Reply when the member is gone; others get Left.
//	3  heartbeat        No reply; keeps the member alive.
//	4  elect            s. Reply: m, the winner.
//	5  election-result  s. Reply (possibly much later): m, the winner.
//	6  signal           s, to. Reply after the Signal event is queued.
//	7  terminate        Reply after the Terminated event is queued.
//	8  sequence         s. Reply: x.
//	9  bind             s, o. Reply.
//	10 lookup           s. Reply (possibly much later): m, o.
//	11 unbind           s. Reply.
//	12 cancel           i = id of a waiting election-result or lookup that
//	                    the client gave up on, sent after that request.
//	                    No reply.
//
// Server to client:
//
//	64 reply   i, and the fields above; or c and err for an error.
//	65 event   e. Events of a pool are sent in their total order.
//	66 ping    No content; sent every I/2 so the client can tell a live
//	           server from a dead one.
//
// Error codes: 1 protocol, 2 version (ErrVersion), 3 pool closed
// (ErrPoolClosed), 4 not a member (ErrNotMember), 5 pool size mismatch
// (ErrPoolSize), 6 already bound (ErrAlreadyBound), 7 not bound
// (ErrNotBound), 8 invalid argument (ErrInvalid), 9 a limit of the server
// reached (ErrTooManyRequests; see Limits), 10 server closing (ErrClosed).
//
// A request other than join on a connection that has not joined gets error
// 4. A message the server cannot decode, a frame that breaks the length
// rules, a request without an id, or a server-only kind from a client closes
// that connection (declaring its member dead); other connections are not
// affected. A join with another protocol version gets error 2, with both
// versions in the text.
package registry
