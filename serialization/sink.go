package serialization

import (
	"fmt"
	"io"
	"net"
)

// Sink is where a Writer's packets go. A transport implements it to move
// packets to one connection, or to every connection of a multicast send
// port. The Writer calls it from the goroutine that uses the Writer: on
// Flush and Finish, and during a write when a packet fills up.
type Sink interface {
	// WritePacket moves bufs (one or more complete packets, in order) to the
	// destination(s). It may consume bufs, as net.Buffers.WriteTo does, but
	// must neither retain bufs nor modify the bytes it refers to after
	// returning: some of them are the caller's own slices (bulk packets) and
	// the rest are reused for the next packets. A multicast sink must copy
	// the slice header per destination before consuming it.
	WritePacket(bufs net.Buffers) error
}

// SinkFunc adapts an ordinary function to the Sink interface.
type SinkFunc func(bufs net.Buffers) error

// WritePacket calls f(bufs).
func (f SinkFunc) WritePacket(bufs net.Buffers) error { return f(bufs) }

// StreamSink is a Sink for one byte stream. With a *net.TCPConn (or any
// writer net.Buffers knows) each WritePacket is a single vectored write
// system call; with other writers it writes the buffers one by one. It is
// not safe for concurrent use, like the Writer that feeds it.
type StreamSink struct {
	w    io.Writer
	bufs net.Buffers // a field, so WriteTo's pointer receiver does not allocate
}

// NewStreamSink returns a Sink writing every packet to w.
func NewStreamSink(w io.Writer) *StreamSink { return &StreamSink{w: w} }

// WritePacket writes all of bufs to the underlying writer.
func (s *StreamSink) WritePacket(bufs net.Buffers) error {
	s.bufs = bufs
	_, err := s.bufs.WriteTo(s.w)
	s.bufs = nil
	return err
}

// errNoSink is reported by a Writer created without a Sink.
var errNoSink = fmt.Errorf("%w: the Writer has no Sink", ErrUnsupported)

// WriteClose sends one Close packet to sink: the control packet that tells
// the receiving Reader this side disconnects cleanly, so that its Next
// reports ErrClosedByPeer instead of a truncated stream.
func WriteClose(sink Sink) error {
	if sink == nil {
		return errNoSink
	}
	var h [HeaderSize]byte
	putHeader(h[:], nativeOrderByte(), FlagClose, &[numSections]uint32{})
	if err := sink.WritePacket(net.Buffers{h[:]}); err != nil {
		return fmt.Errorf("serialization: sending close packet: %w", err)
	}
	return nil
}

// isNilSink reports whether s is nil or a nil SinkFunc, either of which
// would panic when called.
func isNilSink(s Sink) bool {
	if s == nil {
		return true
	}
	f, ok := s.(SinkFunc)
	return ok && f == nil
}
