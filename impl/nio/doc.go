// Package nio is the Ibis implementation on an event loop (gnet v2), after NioIbis.
//
// Every send port and every receive port has a flavour that says who does its I/O:
//
//   - blocking: the program's goroutine writes (send) or reads its one connection
//     (receive), as impl/tcp does;
//   - nonblocking: the instance's gnet engine does it. A send queues the message's
//     packets per connection, a multicast queues one reference-counted copy for all its
//     connections, and finishing a message waits until the queue is written. A receive
//     port's connections are read by the event loops into per-connection inboxes, and a
//     receive takes, from a queue, the next connection whose next message can start
//     (its first packet has arrived; on a many-to-one port, a message of up to 256 KiB
//     once all of it has: core.WholeMessageLimit): no goroutine and no read buffer per
//     connection;
//   - thread: like nonblocking, on a second engine with a single event loop: one
//     dedicated goroutine does all the I/O of the instance's thread-flavour ports.
//
// The flavour comes from the port type's capabilities (sendport.blocking,
// receiveport.thread, ...), else from the property nio.send / nio.receive (or
// $IBIS_NIO_SEND / $IBIS_NIO_RECEIVE), else from the type: one-to-many send ports and
// many-to-one receive ports are nonblocking, the others blocking. A blocking receive
// port cannot serve a many-to-one type: a port type that asks for it is refused, and a
// forced blocking flavour leaves many-to-one ports on nonblocking.
//
// The wire format (handshake and serialization packets over TCP) is the one impl/tcp
// uses, so every flavour talks to every other flavour and to impl/tcp.
//
// # How it works
//
// Like impl/tcp it is a core.Transport with one listener per instance; what differs is
// who does each connection's I/O after the handshake. Each mechanism is described in the
// file that implements it:
//
//   - Engines (engine.go): one gnet client engine per instance, with nio.loops event
//     loops (default GOMAXPROCS), serves every nonblocking connection; a second engine
//     with a single event loop is started the first time a thread-flavour port needs
//     it (that loop is a goroutine of its own, not locked to an OS thread, which
//     would slow a round trip). Sockets are handed to an engine (EnrollContext) once
//     the handshake is done; the handshake is read from the socket itself, unbuffered,
//     so nothing of the stream is consumed before the event loop owns it.
//   - Nonblocking and thread receive (inbound.go): the event loop pushes what it reads
//     into the connection's inbox (push-mode receive and its flow control are
//     described in internal/inbox); a full inbox stops the socket being read. On a
//     busy socket, or when a receiver waits for a large array, the loop then reads the
//     socket itself: straight into the receiver's slice, one copy out of the kernel as
//     a blocking reader has (internal/inbox/posted.go), else into pooled buffers the
//     inbox keeps. After it served a connection the loop polls for a while (nio.spin,
//     loopspin.go), so that an answer that comes soon finds it awake.
//   - Nonblocking and thread send: queued.go (the queue, its bounds and the event
//     loop's writes) and direct.go (the sender writing the socket itself while nothing
//     is queued).
//   - Where nio works beneath gnet, on the socket's descriptor (reading it in
//     OnTraffic, pausing a connection, writing, waiting for a full socket), and which
//     gnet limit each works around: descriptor.go, the only file that does.
//   - Connection states: each queued connection's life is one typed state (outState in
//     queued.go, inState in inbound.go) whose legal moves are listed in one place
//     (CanMove, through internal/fsm), and every change goes through it.
//   - Blocking flavours are impl/tcp's (impl/internal/sockets): the caller writes the
//     socket; a blocking receive port is read by the connection's goroutine or, on a
//     one-to-one explicit port, by Receive itself. Their readers poll an empty socket
//     briefly before they park (property nio.spin; impl/internal/sockets/spin.go).
//
// Each engine logs to the instance's zap logger (gnet.WithLogger); gnet also makes the
// last logger it was given its process-wide default, so with several instances in one
// process gnet's few global messages go to the newest instance's logger. Never stdout.
// gnet's package initialisation starts an ants worker pool with two housekeeping
// goroutines for the life of the process; the leak checks ignore exactly those two
// (internal/leakcheck). Everything an instance starts ends with its Close.
package nio
