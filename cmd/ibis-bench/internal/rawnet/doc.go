// Package rawnet is the raw-socket baseline of ibis-bench: plain net.TCPConn
// connections (TCP_NODELAY) carrying length-prefixed frames, with a server that
// echoes or acknowledges them. Experiments run it between the same processes as
// their Ibis measurement, in the same invocation, so every Ibis figure has a
// baseline taken under the same conditions.
//
// A frame is an 8-byte header — the payload length and the length of the reply
// wanted (NoReply for none), both uint32 little endian — followed by the payload.
// The server answers a frame that wants a reply with a frame of that many bytes.
package rawnet
