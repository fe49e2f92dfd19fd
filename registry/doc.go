// Package registry lets the processes of an Ibis pool find each other.
//
// A central Server (run by cmd/ibis-registry, or embedded in a launcher with
// StartEmbedded) holds pools by name. Every Ibis instance holds a Client,
// made by Join, through which it
//
//   - joins a pool and learns its members, and hears of joins, clean leaves
//     and deaths in one total order (Events, WithEventHandler, Members);
//   - elects leaders (Elect, ElectionResult; strict: the first candidate wins
//     and all agree on it);
//   - signals other members (Signal);
//   - waits for a closed-world pool to fill (WithPoolSize,
//     WaitUntilPoolClosed);
//   - ends a run (Terminate, WaitUntilTerminated);
//   - draws sequence numbers (Sequence; one sequence per pool and name);
//   - publishes and finds global names of receive ports (Bind, Lookup,
//     Unbind).
//
// Java Ibis's central registry is the model.
//
// # Failure detection
//
// A member whose connection breaks without a leave (its process ended,
// even by SIGKILL; its host reset the connection) is declared Died at
// once. A member that stops answering is declared Died only when nothing
// arrived from it for the death timeout D (WithDeathTimeout, default 30s):
// long enough that a process on a loaded node (scheduling stalls of
// seconds, swapping, a short SIGSTOP or virtual-machine pause) stays a
// member, short enough that a silently partitioned or hung one is buried
// within a minute. A plain timeout was chosen over an accrual detector: it
// is one number to explain and to set (ibis-registry -death-timeout,
// IBIS_DEATH_TIMEOUT for an embedded server).
//
// The server announces its heartbeat interval I (WithHeartbeatInterval,
// default 2s) and D in the join reply. The client sends a heartbeat every
// I/2 from its connection's writer goroutine, which runs no program code;
// the server pings every I/2 from its own. Silence is judged with care on
// both sides, so that neither blames the other for its own stall:
//
//   - When a member's D has passed, the server does not trust the expired
//     deadline: it first reads whatever arrived meanwhile (a server that
//     was itself stopped finds the heartbeats queued in the socket), and
//     waits one more interval I for a frame (a member that runs sends one
//     every I/2).
//   - A goroutine of the server that only ticks (every I/2) notices when
//     the server itself did not run (SIGSTOP, a paused virtual machine,
//     starvation): a tick later than a whole period counts, by what it was
//     late, as a stall, and stalls are left out of every member's silence,
//     so the server's own pause is never a member's death.
//   - A client keeps a silent server for 2*D (3*I for a server too old to
//     announce D), after the same drain, leaving out its own stalls (as
//     its heartbeat ticks show them). Twice as long, because a client that gave the server up
//     would close its connection, which the server takes for a death. A
//     client given several front ends leaves a silent one after D/2
//     (at least 2*I) instead: it moves to another front end, which takes
//     it over before the silent one's lease (D) ends.
//
// A member declared dead for its silence may only have been stopped. The
// server sends it its own Died event before it closes the connection; the
// member reads it when it runs again and ends: Err matches ErrDeclaredDead
// and the last RegistryLost event's Name begins with LostDeclaredDead (the
// others have heard Died and cut it off, so it cannot go on; an Ibis
// instance closes itself). It ends the same way when a server that ran
// all along refuses it back after its connection broke, and when the
// embedded server it lost still answers.
//
// A client that hears nothing for its limit, or whose connection breaks,
// has lost the registry: its calls fail with ErrRegistryLost, and it
// either gives up or tries to rejoin (see Registry restarts).
//
// A member that leaves or dies loses the elections it won (a later Elect can
// win anew), its bound names, and its waiting requests. A pool whose last
// member is gone is forgotten, so its name can be used afresh.
//
// Join lets the server be silent for at most 3*DefaultHeartbeatInterval
// before its join reply, counted again from each frame the server sends
// meanwhile (a front end busy with a storm of joins pings, and sends the
// Joined events of the members before), but waits ten times that at most in
// all; a server silent that long, or that never answers, makes Join fail
// with ErrRegistryLost. Nothing listening at the address is
// retried for WithDialTimeout (DefaultDialTimeout, 5s), so that a program
// started together with its registry finds it and a wrong address fails
// within seconds; a host name that does not resolve fails at once. Two Close calls (or Leave and Close)
// at once are safe: the later one waits, as briefly as Close does, for the
// leave under way, so the others see Left rather than Died.
//
// # Registry restarts
//
// The registry is a failure domain of its own: losing it ends no member. A
// client that loses its server delivers a RegistryLost event (Name says
// why), fails every call with ErrRegistryLost from then on, and keeps the
// last membership it knew. What follows depends on the server it lost,
// which said so in the join reply:
//
//   - A server that can be restarted (NewServer, as cmd/ibis-registry runs
//     it: WithRestartable) is dialled again at the same address (or, with
//     several front ends, at the next one; see below), with
//     back-off (from 20ms, doubling, at most a second apart), until the
//     client rejoins, Close ends the attempts, or WithReconnectTimeout (10
//     minutes) passes. The client rejoins with its own Identifier, tells
//     the server the elections it won, the global names it bound, the
//     sequence numbers it drew and the members it knows, and delivers
//     RegistryRestored once the pool is whole again.
//   - An embedded server (StartEmbedded) ends with its process and cannot
//     come back: the client gives up at once.
//
// Giving up (also when the reconnect limit passes, or when the restarted
// server refuses the member) is a last RegistryLost event whose Name begins
// with LostForGood; then the client ends (Done, Err).
//
// A restarted server knows nothing and rebuilds each pool from the members
// that come back. The first one to rejoin creates the pool in a recovering
// state, which ends as soon as every member that a returning member knows
// of is back, or else once no member came back for the recovery grace
// period (WithRecoveryGrace, 10s): the members still missing are then
// declared dead, and everyone hears Died for them, before RegistryRestored.
// A member that has missed the Joined events of members that joined just
// before the server died hears them then, with their first numbers; seq
// numbers go on above the highest any returning member had seen. Member
// numbers are never handed out twice: newcomers get numbers above every
// number the returning members heard of. While a pool is recovering,
// newcomers wait (Join retries until its context ends), and so do, for the
// recovery window after the server starts (WithRecoveryWindow; 3s in
// cmd/ibis-registry), newcomers of pools the server does not know yet: such
// a pool may be on its way back. A member that comes back after its pool
// was rebuilt without it (it was declared dead), or to a server that has
// run all along (which declared it dead when its connection broke), is
// refused and gives up. What is not rebuilt: the requests that were
// waiting (ElectionResult and Lookup calls fail with ErrRegistryLost and
// are to be made again), pool events that a returning member missed
// (other than Joined, Died, PoolClosed and Terminated, which are made up
// for), and sequence numbers drawn only by members that did not come back
// (they may be drawn again).
//
// # Several front ends over etcd
//
// A server given WithEtcdStore (ibis-registry -store etcd://HOST:PORT,...)
// keeps no pool of its own: every change (a join, a leave, a death, an
// election, a signal, a sequence number, a binding) becomes an op that it
// writes to etcd as a key of its own, and every server over the same etcd
// (a front end) applies every op in etcd's revision order to its copy of
// the pools, answering its own members and sending them their events. So
// all front ends agree on one total order, elections have one winner and
// sequences have no gaps, whichever front end a member uses; the memory
// store (the default) is the same code with the op applied at once.
//
// A member lists the front ends (Join's address "a:8888,b:8888") and
// belongs to the one it is connected to. When that front end dies, stays
// silent for half the death timeout, or stops serving, the member rejoins
// at another with its Identifier; that front end takes it over and answers
// its resume with the events it missed, in order, before any newer one:
// the member sees RegistryLost, RegistryRestored and no gap or repeat, and
// the others see nothing. Each front end holds an etcd lease of the death
// timeout (at least 5s); when the lease of a front end ends, the members
// it still owns (those that did not move) are declared dead. A front end
// that etcd has not answered for a sixth of the death timeout (at least
// 3s), or whose lease has ended, stops serving: it closes its members'
// connections (they move) and refuses joins with ErrUnavailable until it
// has read the pools from etcd again. See docs/REGISTRY-HA.md.
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
// connections that have not joined yet: WithMaxUnjoinedConnections (1024)
// in all, and WithMaxUnjoinedPerSource (a quarter of that) from one source
// address, so that idle connections from one machine cannot keep another
// out. A connection beyond either is refused in the pool check with a
// reason naming the limit (Join fails with ErrTooManyRequests), by at most
// 64 goroutines at once for at most a second each; beyond those it is
// closed at once. A connection must join within D of being accepted; its
// TLS handshake and pool check count within that time, and a TLS server
// wants the client's hello to begin within 1.5*I (at least a second).
//
// One source address (the client's IP address; loopback gets no exemption)
// is limited too, so that one machine cannot fill the server with pools or
// members: a join fails with ErrTooManyRequests, and the server logs it,
// when its address already has members in WithMaxPoolsPerSource pools
// (default 64; a pool it is already in does not count again) or already
// has WithMaxMembersPerSource members over all pools (default 1024). Rejoins
// after a restart count the same. 0 or a negative value turns a limit off;
// a launcher that runs more processes of a pool on one machine raises the
// member limit (ibis-run does).
//
// # Trust
//
// Without a secret or TLS the registry is open, as it always was: anyone
// who can reach its port can join any pool, see its events, look up its
// names and claim its elections. Two independent mechanisms close it; use
// both on a network you do not control (docs/SECURITY.md).
//
// A pool secret (WithServerSecret for every pool, WithPoolSecrets per
// pool; WithPoolSecret on the client) is checked before anything else on
// a connection, by the mutual challenge-response of internal/poolauth: the
// server sends a fresh nonce, the client answers with its own and an
// HMAC-SHA256 of both nonces and the pool name under the secret, the
// server checks it and answers with its own HMAC, which the client checks.
// The secret never crosses the wire; a recorded exchange fails against
// the next fresh nonce (no replay); a proof for one pool is worthless for
// another; and a client with a secret refuses a server that cannot prove
// it knows it. The server reads nothing else from a connection before the
// check passed, and the connection may then join only the pool it was
// checked for (or, if that pool is open, another open pool). A refused
// client gets an error matching ErrUnauthenticated that says why (wrong
// proof, no secret given, pool not served), and the server logs the
// refusal at Warn with the client's address (at most 20 lines a second;
// the next line says how many were left out) and counts it
// (Stats.Refused). A server given per-pool secrets and no server-wide
// secret serves only the pools it lists. The secret authenticates members;
// it does not hide what they say: without TLS, the traffic is readable
// (and, after the check, open to tampering) on the path.
//
// TLS (WithServerTLS, WithTLS; tlsconf builds both from a certificate, its
// key and the pool's CA) wraps the connection before the pool check: TLS
// 1.3 only, with a client certificate required and both certificates
// checked against the pool's CA. It gives confidentiality and integrity,
// and keeps out anyone without a certificate of that CA; a failed
// handshake is ErrUnauthenticated for the client and a logged refusal for
// the server.
//
// Both sides run their handshakes again on every connection, so a client
// rejoining a restarted server proves itself anew (and a server restarted
// with another secret or CA refuses it: the client gives up). Refusals are
// final for the client: Join does not retry them.
//
// # Wire protocol
//
// The protocol runs over one TCP connection per client: first, over TLS if
// configured, the pool check of internal/poolauth (see its doc for the
// bytes: the server's challenge "IBAU", version 1, a 32-byte nonce; the
// client's hello with the pool name, its nonce and its proof or none; the
// server's verdict, with its own proof, or a refusal and its reason).
// Pool names are therefore at most MaxPoolName (1 KiB) bytes. Then both
// directions carry frames: a big-endian uint32 body length followed by that many bytes
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
//	v    uint    protocol version (join); ProtocolVersion, currently 3. A
//	             server serves MinProtocolVersion (3) to ProtocolVersion.
//	             Version 2 added rejoining (the keys and kinds below
//	             marked v2), version 3 the pool check before the first
//	             frame. A client of version 1 or 2 sends its join where
//	             the server expects the hello: the server closes the
//	             connection and logs it as a client of an older version
//	             (the old client sees a protocol error); a client of
//	             version 3 that meets an older server, which sends no
//	             challenge, fails with ErrVersion
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
//	dt   int     death timeout in nanoseconds (join reply; absent from
//	             servers that predate it, whose clients use 3*h)
//	f    int     the server's maximum frame size (join reply)
//	c    uint    error code of an error reply (below)
//	err  str     what went wrong (error reply)
//	r    ident   v2: the identity a member rejoins with (join)
//	ep   uint    v2: the server's run (join reply): random, never 0; in a
//	             rejoin, the run of the server that was lost
//	fl   uint    v2: flags. Join reply: 1 = restartable (a client that
//	             loses the server tries to rejoin it). Resume: 2 = saw
//	             PoolClosed, 4 = saw Terminated (m: who terminated)
//	rm   [ident] v2: members the rejoining member knows (restore)
//	re   [str]   v2: elections it won (restore)
//	rb   [[str, str]] v2: global names it bound, with their ports (restore)
//	rq   [[str, int]] v2: per sequence, one above the largest number it
//	             drew (restore)
//	ls   uint    v2: the highest event seq it received (resume)
//	nx   uint    v2: one above the highest member number it heard of (resume)
//	js   uint    v2: the seq of its own Joined event (resume)
//	jt   uint    v3: names one Join call in all its attempts (join; see
//	             below)
//
// An ident is the array [pool, id, address, tag] of four strings. An event
// is the array [seq uint, type int, member ident, name str] with the type
// numbered as EventType (Joined = 1 ... Terminated = 7; RegistryLost and
// RegistryRestored are never sent). Strings are at most MaxStringLength
// bytes; each list of a restore message holds at most 4096 items.
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
//	13 restore          v2, after a rejoin: rm, re, rb, rq (any of them;
//	                    several restore messages when they do not fit one
//	                    frame). Reply. Claims that conflict with the pool or
//	                    exceed a limit are dropped (and logged).
//	14 resume           v2, ends a rejoin: ls, nx, js, fl, m. Reply when the
//	                    pool is whole again; before it, the events the
//	                    member missed.
//
// A rejoin is a join (kind 1) with r and ep. The server refuses it with
// error 4 when ep is its own run (the member's connection to this very
// server broke: it was declared dead) or when the pool exists and is not
// recovering (it carries on without the member); otherwise it takes the
// identity back, creating the recovering pool if needed. Until its resume
// is answered the member may only restore, resume, heartbeat or leave;
// other requests get error 11.
//
// A front end over a shared store that gets a join whose jt names a member
// it already holds (the join was made, its reply lost, and the client tried
// again) gives that member to the new connection: it sends the Joined events
// of the members before it, then every event since its own Joined, then
// the reply with its identity, as if the first attempt had been answered.
//
// Server to client:
//
//	64 reply   i, and the fields above; or c and err for an error.
//	65 event   e. Events of a pool are sent in their total order. A
//	           member declared dead for its silence gets its own Died
//	           event last; then the server closes the connection.
//	66 ping    No content; sent every I/2 so the client can tell a live
//	           server from a dead one.
//
// Error codes: 1 protocol, 2 version (ErrVersion), 3 pool closed
// (ErrPoolClosed), 4 not a member (ErrNotMember), 5 pool size mismatch
// (ErrPoolSize), 6 already bound (ErrAlreadyBound), 7 not bound
// (ErrNotBound), 8 invalid argument (ErrInvalid), 9 a limit of the server
// reached (ErrTooManyRequests; see Limits), 10 server closing (ErrClosed),
// 11 (v2) the pool is being rebuilt, or the server is in its recovery
// window: try the join again later (ErrRegistryLost for other requests).
//
// A request other than join on a connection that has not joined gets error
// 4. A message the server cannot decode, a frame that breaks the length
// rules, a request without an id, or a server-only kind from a client closes
// that connection (declaring its member dead); other connections are not
// affected. A join with another protocol version gets error 2, with both
// versions in the text. A join for another pool than the connection's pool
// check gets error 8 (unless both pools are open); a join beyond a limit
// per source address gets error 9.
package registry
