// Package core is the machinery every Ibis-Go implementation shares: the Ibis instance
// (registry membership, port tables, shutdown), send and receive port bookkeeping, the
// message life cycle (one live message per port, upcall dispatch, FIFO delivery), the
// connection handshake and its rules, and the plumbing between ports and the
// serialization streams.
//
// An implementation supplies only a Transport: how to accept connections, how to dial
// one and how to move packets. impl/tcp does that with blocking sockets, impl/nio with
// gnet event loops and impl/mp over MPI, and declares what it can do (Capabilities).
// Each receive port takes its messages from one source, chosen when it is made
// (source.go: reader goroutines, direct receipt, or the transport's own Source);
// whole messages first on many-to-one ports in readahead.go; stalled and dead senders
// in stall.go; the handshake in handshake.go; the token that keeps one message live
// per port in token.go (one per concurrent upcall: concurrent.go); a send port's
// connections and multicast on SendPort; TLS batching in tlsbatch.go; the routes to a peer behind a firewall or NAT (direct,
// reverse set-up, relay through a hub) in route.go, dialorder.go, reverse.go and hubs.go. docs/DESIGN.md has how the packages fit together.
package core
