// Package tcp is the blocking-socket implementation of the Ibis portability layer, in
// the manner of the Java TcpIbis: one TCP connection per send port to receive port
// pair, TCP_NODELAY, and multicast by writing each message to every connection in turn.
// It is the latency reference of Ibis-Go.
//
// The sender's goroutine writes the socket: a message's packets leave with one vectored
// write (writev), so a 1 MiB []float64 is the header, a byte view of the caller's slice
// and the end packet, with no copy. Each outgoing connection has one goroutine that only
// watches for the receiver closing (the receiver never writes after the handshake, so
// any read result means the connection ended). Each incoming connection has an 8 KiB
// read buffer and one goroutine; it is handed to core with Acceptance.ServeDirect, so a
// one-to-one port with explicit receipt is read by Receive itself and every other port
// by that goroutine (impl/internal/core/delivery.go). Bulk data goes from the socket
// straight into the reader's slice. Readers poll an empty socket briefly before they
// park (property tcp.spin; impl/internal/sockets/spin.go). A peer gets 10 s to finish
// its handshake (impl/internal/core/handshake.go). Under TLS the records of one write go
// out in batches (impl/internal/core/tlsbatch.go). The plumbing it shares with nio's
// blocking flavours is impl/internal/sockets.
//
// Link it in with a blank import and select it with ipl.WithImplementation("tcp"),
// IBIS_IMPL=tcp or -impl tcp; it is also the default when no implementation is named.
package tcp
