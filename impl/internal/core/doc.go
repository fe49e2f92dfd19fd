// Package core is the machinery every Ibis-Go implementation shares: the Ibis instance
// (registry membership, port tables, shutdown), send and receive port bookkeeping, the
// message life cycle (one live message per port, upcall dispatch, FIFO delivery), the
// connection handshake and its rules, and the plumbing between ports and the
// serialization streams.
//
// An implementation supplies only a Transport: how to accept connections, how to dial
// one and how to move packets. impl/tcp does that with blocking sockets; the event-loop
// and MPI implementations plug in the same way.
package core
