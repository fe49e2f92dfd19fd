package ipl

// WriteMessage is a message being filled at a send port. It is obtained from
// SendPort.NewMessage; while it lives no other message can be made at that port. Values
// are read at the other end in the order they were written. A slice given to WriteArray
// or WriteObject must not be changed until Send or Finish returns: large slices are sent
// straight from the caller's memory.
type WriteMessage interface {
	WriteBool(v bool) error
	WriteByte(v byte) error
	WriteInt8(v int8) error
	WriteInt16(v int16) error
	WriteUint16(v uint16) error
	WriteInt32(v int32) error
	WriteUint32(v uint32) error
	WriteInt64(v int64) error
	WriteUint64(v uint64) error
	WriteInt(v int) error
	WriteUint(v uint) error
	WriteFloat32(v float32) error
	WriteFloat64(v float64) error
	WriteString(v string) error
	// WriteArray writes a primitive slice ([]float64, []int32, []byte, ...) or a 2-D
	// slice of one ([][]float64, ...; rows may differ in length).
	WriteArray(slice any) error
	// WriteObject writes any Go value (needs serialization.object); primitive slices,
	// 2-D slices and strings take a fast path, everything else goes through msgpack.
	WriteObject(v any) error
	// Send pushes what was written so far onto the network without ending the message.
	Send() error
	// Finish ends the message and returns the bytes it moved (headers included). After
	// Finish the message must not be used: its port may reuse it for a later one.
	//
	// Finish returning nil means the message was handed whole to every connection the
	// port has (on tcp and nio: written to the socket, past any queue), not that a
	// receiver has read it: like a write to a socket, or MPI_Send, it completes
	// locally. A program that needs proof of receipt asks its receiver for a reply.
	// What Ibis does promise (tcp, nio): a receiver that cuts a connection (its sender
	// was declared dead, or stalled in the middle of a message) first tells the sender
	// how many whole messages it took, and if that is fewer than Finish handed over,
	// the next Finish (or Disconnect, or Close) of the port returns an error matching
	// ErrConnectionLost that names the receiver and says how many were thrown away. A
	// loss of other kinds (a receiver whose process ended, a broken network) is
	// reported as the port sees it: the disconnect handler, LostConnections, and Send
	// or Finish of a message it interrupts.
	//
	// A connection lost while the message lived (Send and Finish report it) is a
	// *ConnectionError naming the receive port, one per lost connection, joined; the
	// others still got the whole message.
	Finish() (int64, error)
	// Cancel ends the message without sending what was not sent yet, and frees the
	// port, for a sender that cannot complete it (a write failed with ErrTooLarge, say).
	// If nothing of the message went out (no Send; smaller than a packet), the
	// receivers see nothing of it (on a numbered port, the next message takes its
	// number); otherwise they get it cut short: their reads past what came fail with
	// ErrTypeMismatch, and the connection goes on. It reports
	// connections lost, as Finish does. After Cancel the message must not be used.
	Cancel() error
	// Bytes returns the bytes written so far.
	Bytes() int64
	// SequenceNumber returns the message's number on a communication.numbered port
	// (0, 1, 2, ... per send port), and -1 otherwise.
	SequenceNumber() int64
	// SendPort returns the port the message belongs to.
	SendPort() SendPort
}

// ReadMessage is a message being read at a receive port. Reads must mirror the writes.
// While it lives no other message is delivered by its port; Finish (or, for an upcall,
// returning) frees the port. Unread data is skipped by Finish.
type ReadMessage interface {
	ReadBool() (bool, error)
	ReadByte() (byte, error)
	ReadInt8() (int8, error)
	ReadInt16() (int16, error)
	ReadUint16() (uint16, error)
	ReadInt32() (int32, error)
	ReadUint32() (uint32, error)
	ReadInt64() (int64, error)
	ReadUint64() (uint64, error)
	ReadInt() (int, error)
	ReadUint() (uint, error)
	ReadFloat32() (float32, error)
	ReadFloat64() (float64, error)
	ReadString() (string, error)
	// ReadArray fills the caller's slice (or 2-D slice of the written shape) exactly;
	// large slices are read straight from the network into its memory.
	ReadArray(dst any) error
	// ReadObject decodes the next object into the value ptr points to.
	ReadObject(ptr any) error
	// Finish ends the message, skipping what was not read, and returns its size in bytes.
	// After Finish the message must not be used: its port may reuse it for a later one.
	Finish() (int64, error)
	// Bytes returns the bytes of the message consumed so far.
	Bytes() int64
	// Origin names the send port the message came from.
	Origin() SendPortIdentifier
	// SequenceNumber returns the sender's number for the message on a
	// communication.numbered port, and -1 otherwise.
	SequenceNumber() int64
	// ReceivePort returns the port that delivered the message.
	ReceivePort() ReceivePort
}
