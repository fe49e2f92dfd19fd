// Package tcp is the blocking-socket implementation of the Ibis portability layer, in
// the manner of the Java TcpIbis: one TCP connection per send port to receive port
// pair, TCP_NODELAY, one goroutine per incoming connection that reads its messages, and
// multicast by writing each message to every connection in turn. Large primitive slices
// go from the sender's memory to the socket with one vectored write and from the socket
// straight into the reader's slice. It is the latency reference of Ibis-Go.
//
// Link it in with a blank import and select it with ipl.WithImplementation("tcp"),
// IBIS_IMPL=tcp or -impl tcp; it is also the default when no implementation is named.
package tcp
