package serialization

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
	"go.uber.org/zap"
)

// Sizes of the Reader's reusable buffers.
const (
	growStep     = 64 << 10 // first allocation for data not yet received
	skipBufSize  = 32 << 10 // scratch for discarding bulk bodies
	maxRetainBuf = 1 << 20  // larger object scratch is released after use
)

// discarder is implemented by *bufio.Reader: skipping without copying.
type discarder interface {
	Discard(n int) (int, error)
}

// Reader deserializes the messages of one stream, one message at a time,
// reading packets from an io.Reader (for TCP, a *bufio.Reader over the
// connection). It is reusable across messages without allocating and is not
// safe for concurrent use.
//
// Reads must mirror the writes: the same types, in the same order. A read
// that cannot match reports ErrTypeMismatch or ErrShortMessage and consumes
// nothing. Framing errors (ErrCorrupt from Next, Finish, or a packet
// boundary, and I/O errors inside a packet) are sticky: the stream is
// unusable afterwards.
type Reader struct {
	kind Kind
	src  io.Reader
	disc discarder
	cfg  readerConfig

	hdr  [HeaderSize]byte
	buf  []byte // body of the current small packet; 8-byte aligned
	off  [numSections]int
	end  [numSections]int
	swap bool // the sender's order is not native
	last bool // the current packet carries the End flag

	bulkSec  int
	bulkLeft int64 // unread body bytes of the current bulk packet
	bulkPad  int   // its padding, read when bulkLeft reaches zero

	inMsg    bool    // a message is open: Next read its first packet, Finish has not ended it
	frm      framing // the messages' structure at the headers (framing.go)
	consumed int64   // bytes of the message read from src so far
	err      error   // sticky

	scr   [8]byte
	skip  []byte
	lens  []int64 // row lengths of a 2-D object being read
	obj   []byte  // msgpack bytes of an object being read
	objR  bytes.Reader
	dec   *msgpack.Decoder
	codec decoder // the object codec's state (codec.go)

	costType reflect.Type // the destination type of the last msgpack object
	cost     *objCost     // and its allocation costs
}

// NewReader returns a Reader of the given kind over r. Options set the
// packet and message limits, the object depth and memory limits and the
// logger.
func NewReader(kind Kind, r io.Reader, opts ...ReaderOption) *Reader {
	cfg := newReaderConfig(opts)
	rd := &Reader{kind: kind, src: r, cfg: cfg, frm: cfg.framing()}
	rd.disc, _ = r.(discarder)
	switch {
	case !kind.valid():
		rd.err = fmt.Errorf("%w: unknown serialization kind %d", ErrUnsupported, int(kind))
	case r == nil:
		rd.err = fmt.Errorf("%w: the Reader has no source", ErrUnsupported)
	}
	return rd
}

// Kind returns the serialization kind the Reader was created with.
func (r *Reader) Kind() Kind { return r.kind }

// Count returns the bytes of the current (or last) message read from the
// stream so far, headers and padding included. Once a message is finished it
// equals what the sending Writer's Finish returned.
func (r *Reader) Count() int64 { return r.consumed }

// fail records a sticky error and closes the message.
func (r *Reader) fail(err error) error {
	r.err = err
	r.inMsg = false
	r.cfg.log.Debug("serialization: stream unusable", zap.Error(err))
	return err
}

// Next blocks until the next message starts and reads its first packet. It
// finishes the previous message first if the caller did not. It returns
// io.EOF when the stream ends cleanly before a message, ErrClosedByPeer when
// the peer sent a Close packet, the source's error (wrapped) when reading
// fails before any byte of a header arrived (the stream is then still
// intact, e.g. after a read deadline), and an error wrapping ErrCorrupt for a
// malformed or truncated packet.
//
// Next blocks in the source's Read. A transport bounds the wait the way it
// bounds any read of its connection: with a read deadline, or by closing the
// connection when its context ends; Next then returns that error.
func (r *Reader) Next() error {
	if r.err != nil {
		return r.err
	}
	if r.inMsg {
		if err := r.Finish(); err != nil {
			return err
		}
	}
	r.consumed = 0
	n, err := io.ReadFull(r.src, r.hdr[:])
	if err != nil {
		if n == 0 {
			if err == io.EOF {
				return io.EOF
			}
			return fmt.Errorf("serialization: waiting for a message: %w", err)
		}
		r.consumed = int64(n)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return r.fail(corruptf("truncated packet header: the stream ended after %d of %d bytes", n, HeaderSize))
		}
		return r.fail(fmt.Errorf("serialization: reading packet header: %w", err))
	}
	r.consumed = HeaderSize
	if err := r.parse(); err != nil {
		return err
	}
	r.inMsg = true
	return nil
}

// Finish ends the current message: it skips whatever of it was not read, up
// to and including the packet with the End flag, so that the next Next
// starts at a message boundary. Finishing when no message is open does
// nothing.
func (r *Reader) Finish() error {
	if r.err != nil {
		return r.err
	}
	if !r.inMsg {
		return nil
	}
	for {
		r.off = r.end
		if r.bulkLeft > 0 {
			n := r.bulkLeft
			if err := r.discard(n); err != nil {
				return err
			}
			if err := r.bulkRead(n); err != nil {
				return err
			}
		}
		if r.last {
			break
		}
		if err := r.nextPacket(); err != nil {
			return err
		}
	}
	r.inMsg = false
	r.releaseBody()
	return nil
}
