// Package serialization implements the byte, data and object message
// streams of Ibis-Go, shared by every transport (tcp, nio and mp).
//
// A send port creates a Writer over a Sink, which moves packets to one or
// several connections; a receive port creates a Reader over an io.Reader
// (a buffered socket, an MPI stream, or an event loop's push inbox, which
// follows the packets with a Scanner). A Kind decides which calls
// are allowed: KindByte only bytes, KindData every primitive, string and
// primitive 1-D or 2-D slice, KindObject also arbitrary values through
// WriteObject and ReadObject. As in Ibis, reads must mirror writes: the
// reader asks for the same types in the same order, and supplies the slices
// to fill.
//
// # Wire format
//
// A message is a sequence of one or more packets. A packet is a 32-byte
// header, a body, and 0 to 7 zero bytes of padding that make the body length
// a multiple of 8:
//
//	offset  size  field
//	0       1     magic 0xB1
//	1       1     byte order of the sender: 0 little endian, 1 big endian
//	2       1     flags: 0x01 End (last packet of the message),
//	              0x02 Bulk (the body is one large section),
//	              0x04 Close (control packet: the sender disconnects
//	              cleanly; no body, not part of a message)
//	3       1     reserved, 0
//	4       4     reserved, 0
//	8       24    six uint32 element counts, in the sender's byte order:
//	              float64, int64 (also uint64, int, uint), float32,
//	              int32 (also uint32), int16 (also uint16),
//	              int8 (also uint8, byte, bool as 0/1)
//
// The body holds six typed sections in the order of the counts, each
// count*size bytes in the sender's byte order. The largest elements come
// first, so with a header of 32 bytes and bodies padded to 8, every section
// of every packet starts aligned to its element size. The receiver makes
// right: it swaps bytes only when the sender's order differs from its own.
//
// Within a packet the values of each type are read in the order they were
// written, each section consumed sequentially; the packets of a message are
// read in order. A read of a type whose section is exhausted while the
// packet still holds unread values of another type cannot mirror the writes
// and fails with ErrTypeMismatch; a read past the End packet fails with
// ErrShortMessage.
//
// Small packets collect values of any types; their body is at most the
// maximum packet size (WithMaxPacketSize, default 64 KiB), and the Writer
// seals and sends a packet when the next value would not fit. A primitive
// slice (or string) of at least the bulk threshold (WithBulkThreshold,
// default 4 KiB) becomes its own Bulk packet: exactly one non-zero count,
// and a body that is a byte view of the caller's memory, sent without a
// conversion copy in one vectored write (net.Buffers) together with the
// other pending packets. The small packet open before it is sealed first. A
// slice of more than 2^32-1 elements is split into several bulk packets. The
// Reader reads a bulk body straight into the destination slice and swaps it
// in place if the orders differ; several consecutive reads with smaller
// destinations may share one bulk body. A writer that sends in a non-native
// order (WithByteOrder, for tests and golden files) converts bulk bodies
// into a scratch buffer in chunks instead.
//
// The last packet of a message carries the End flag; after a bulk packet the
// End packet is a separate empty packet (a reader accepts End together with
// Bulk as well). An empty message is one 32-byte packet. A 1-D slice is sent
// without its length (the reader's slice gives it); a string is an int32
// length and its bytes; a 2-D slice is an int64 row count, every row's int64
// length, then the rows. An object (KindObject) starts with a one-byte tag
// in the int8 section: 0 nil, 1 msgpack (int64 length, then the msgpack/v5
// bytes), 2 string, 3 the object codec (int64 length, then the codec's
// bytes; its format and what it covers are described in codec.go), 16+e a primitive, 32+e a 1-D slice (int64 length, -1 for
// nil, then the elements), 48+e a 2-D slice (int64 row count, -1 for nil,
// then every row's int64 length, -1 for a nil row, then the rows), where e numbers the element types bool, uint8, int8,
// int16, uint16, int32, uint32, int64, uint64, int, uint, float32, float64
// from 0.
//
// # Limits
//
// Every length on the wire is a claim checked against configured limits
// before anything is allocated: a small packet over the Reader's maximum
// packet size (WithReaderMaxPacketSize) or a message over its maximum
// message size (WithReaderMaxMessageSize, default 1 GiB) is rejected with
// ErrCorrupt and ErrTooLarge; strings and object slices are allocated as
// their bytes arrive, never beyond what the rest of the message may hold;
// msgpack bytes are checked for well-formedness and nesting depth
// (WithReaderMaxObjectDepth) before the msgpack decoder sees them, and for
// what decoding them could allocate: the decoder allocates every announced
// slice and map in full, so each announced array item and map entry is
// charged at the largest element, entry or pointee reachable from the
// destination's type (msgpack's generic types for interfaces), and an
// object whose estimate exceeds WithReaderMaxObjectMemory (by default the
// maximum message size) is skipped with ErrTooLarge before anything is
// decoded. The object codec's decoder checks every length against the
// bytes left (and the fewest bytes the objects still to come need) before
// it allocates, charges every allocation against WithReaderMaxObjectMemory
// as it goes, bounds the nesting of slices and maps by
// WithReaderMaxObjectDepth, and lets a reference name only an object of
// the type it was sent as. A Writer refuses, with ErrTooLarge and without writing anything,
// a value that would take the message over its own limit
// (WithMaxMessageSize). A small packet's body buffer grows with the bytes
// that arrive, and one over 8 KiB goes back to a shared pool when its message
// is finished: a Reader that waits between messages holds no packet-sized
// buffer.
//
// # Performance
//
// Writers and Readers are reused across messages without allocating:
// primitive reads and writes and WriteArray/ReadArray of large slices
// allocate nothing in the steady state. The conversions of typed slices to
// bytes are internal/byteview's (AsBytes here is the no-conversion view);
// cmd/ibis-bench's conversion experiment compares them with per-element loops.
package serialization
