// Package hub is the relay hub of Ibis-Go: it joins members that cannot dial each
// other (each behind a firewall or a NAT) by splicing two TCP connections that each
// member opens outward to the hub.
//
// A member of a closed site keeps a control connection to each hub it is told of
// (Register). When neither side of a connection can dial the other, the dialling
// member asks a hub to relay (Relay) to the target's published key; the hub tells the
// target on its control connection, the target opens an accept connection, and the
// hub splices the two and copies bytes between them (splice(2) between sockets). A
// relay may name the hub the target registered at: the hub asked then forwards the
// request there, one hop. The relayed stream is a plain byte stream on which the
// members run their own end-to-end handshake (TLS and the pool check), so the hub
// sees only ciphertext with TLS. Every connection is a real *net.TCPConn: the hub
// never multiplexes.
//
// Every connection to a hub starts with the pool check of package poolauth, before
// the hub reads anything else; a hub without secrets (WithSecrets) is open to any
// pool. Frames are small and bounded (see wire.go); the server bounds its
// connections in all and per source address, those still in their pool check,
// registered members and relays being set up, so that strangers cost a bounded
// handshake and bounded memory.
//
// On registration the hub probes the member's advertised addresses: it dials each,
// writes ProbeMagic and a nonce, and counts the address reachable if the nonce comes
// back (AnswerProbe is the member's side). Member.Reachable and Member.Observed report
// what the hub learnt. Control connections carry pings both ways; either side drops a
// peer silent for three intervals.
package hub
