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
//     (its first packet has arrived): no goroutine and no read buffer per connection;
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
package nio
