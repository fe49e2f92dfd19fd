package serialization

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

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

	inMsg    bool
	msgBytes int64 // wire bytes of the message announced by its headers so far
	consumed int64 // bytes of the message read from src so far
	err      error // sticky

	scr  [8]byte
	skip []byte
	lens []int64 // row lengths of a 2-D object being read
	obj  []byte  // msgpack bytes of an object being read
	objR bytes.Reader
	dec  *msgpack.Decoder
}

// NewReader returns a Reader of the given kind over r. Options set the
// packet and message limits, the object depth limit and the logger.
func NewReader(kind Kind, r io.Reader, opts ...ReaderOption) *Reader {
	cfg := defaultReaderConfig()
	for _, o := range opts {
		if o != nil {
			o.applyReader(&cfg)
		}
	}
	cfg.normalize()
	rd := &Reader{kind: kind, src: r, cfg: cfg}
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

// fill reads exactly len(b) bytes of the current packet from the stream.
func (r *Reader) fill(b []byte, what string) error {
	n, err := io.ReadFull(r.src, b)
	r.consumed += int64(n)
	if err == nil {
		return nil
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return r.fail(corruptf("truncated %s: the stream ended after %d of %d bytes", what, n, len(b)))
	}
	return r.fail(fmt.Errorf("serialization: reading %s: %w", what, err))
}

// Next blocks until the next message starts and reads its first packet. It
// finishes the previous message first if the caller did not. It returns
// io.EOF when the stream ends cleanly before a message, ErrClosedByPeer when
// the peer sent a Close packet, the source's error (wrapped) when reading
// fails before any byte of a header arrived (the stream is then still
// intact, e.g. after a read deadline), and an error wrapping ErrCorrupt for a
// malformed or truncated packet.
func (r *Reader) Next() error {
	if r.err != nil {
		return r.err
	}
	if r.inMsg {
		if err := r.Finish(); err != nil {
			return err
		}
	}
	r.consumed, r.msgBytes = 0, 0
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
	if err := r.parse(true); err != nil {
		return err
	}
	r.inMsg = true
	return nil
}

// nextPacket reads the header (and small body) of the message's next packet.
func (r *Reader) nextPacket() error {
	if err := r.fill(r.hdr[:], "packet header"); err != nil {
		return err
	}
	return r.parse(false)
}

// parse validates the header in r.hdr and reads a small packet's body or
// prepares to stream a bulk packet's body.
func (r *Reader) parse(first bool) error {
	h := &r.hdr
	if h[0] != Magic {
		return r.fail(corruptf("bad magic byte 0x%02x at the start of a packet (want 0x%02x)", h[0], Magic))
	}
	if h[1] > orderBig {
		return r.fail(corruptf("unknown byte order %d in packet header", h[1]))
	}
	flags := h[2]
	if flags&^knownFlags != 0 {
		return r.fail(corruptf("unknown flags 0x%02x in packet header", flags))
	}
	if h[3] != 0 || binary.LittleEndian.Uint32(h[4:8]) != 0 {
		return r.fail(corruptf("reserved header bytes are not zero: % x", h[3:8]))
	}
	order := orderOf(h[1])
	var counts [numSections]int64
	var body int64
	nonZero, bulkSec := 0, 0
	for i := range numSections {
		counts[i] = int64(order.Uint32(h[countsOffset+4*i:]))
		body += counts[i] * int64(secSize[i])
		if counts[i] != 0 {
			nonZero++
			bulkSec = i
		}
	}
	if flags&FlagClose != 0 {
		if flags != FlagClose || body != 0 {
			return r.fail(corruptf("malformed close packet: flags 0x%02x, %d body bytes", flags, body))
		}
		if first {
			r.cfg.log.Debug("serialization: peer closed the stream")
			return r.fail(ErrClosedByPeer)
		}
		return r.fail(fmt.Errorf("%w in the middle of a message, after %d bytes", ErrClosedByPeer, r.consumed-HeaderSize))
	}
	padded := pad8(body)
	if total := r.msgBytes + HeaderSize + padded; total > r.cfg.maxMessage {
		return r.fail(fmt.Errorf("%w: %w: a packet takes the message to %d bytes, over the limit of %d bytes",
			ErrCorrupt, ErrTooLarge, total, r.cfg.maxMessage))
	}
	bulk := flags&FlagBulk != 0
	if !bulk && padded > int64(r.cfg.maxPacket) {
		return r.fail(fmt.Errorf("%w: %w: packet body of %d bytes exceeds the maximum packet size of %d bytes",
			ErrCorrupt, ErrTooLarge, padded, r.cfg.maxPacket))
	}
	if bulk && nonZero != 1 {
		return r.fail(corruptf("a bulk packet must hold values of exactly one type, this one announces %d types", nonZero))
	}
	r.msgBytes += HeaderSize + padded
	r.swap = (h[1] == orderLittle) != nativeLittle
	r.last = flags&FlagEnd != 0
	r.off = [numSections]int{}
	r.end = [numSections]int{}
	if bulk {
		r.bulkSec, r.bulkLeft, r.bulkPad = bulkSec, body, int(padded-body)
		return nil
	}
	b := r.bodyBuf(int(padded))
	if err := r.fill(b, "packet body"); err != nil {
		return err
	}
	for _, c := range b[body:] {
		if c != 0 {
			return r.fail(corruptf("packet padding is not zero: % x", b[body:]))
		}
	}
	o := 0
	for i := range numSections {
		r.off[i] = o
		o += int(counts[i]) * secSize[i]
		r.end[i] = o
	}
	return nil
}

// bodyBuf returns an 8-byte aligned buffer of n bytes for a packet body.
func (r *Reader) bodyBuf(n int) []byte {
	if cap(r.buf) < n {
		c := max(n, min(2*cap(r.buf), r.cfg.maxPacket), 512)
		r.buf = AsBytes(make([]uint64, (c+7)/8))
	}
	return r.buf[:n]
}

// bulkRead accounts for n bytes of the bulk body read and, at its end,
// reads and checks the padding.
func (r *Reader) bulkRead(n int64) error {
	r.bulkLeft -= n
	if r.bulkLeft > 0 || r.bulkPad == 0 {
		return nil
	}
	pad := r.scr[:r.bulkPad]
	r.bulkPad = 0
	if err := r.fill(pad, "bulk packet padding"); err != nil {
		return err
	}
	for _, c := range pad {
		if c != 0 {
			return r.fail(corruptf("bulk packet padding is not zero: % x", pad))
		}
	}
	return nil
}

// fast returns the next n bytes (one element) of section s of a small
// packet, or nil when they need the slow path (takeSlow). It is small
// enough to be inlined into every primitive read.
func (r *Reader) fast(s, n int) []byte {
	o := r.off[s]
	if o+n > r.end[s] {
		return nil
	}
	r.off[s] = o + n
	return r.buf[o : o+n]
}

// take returns the next n bytes (one element) of section s.
func (r *Reader) take(s, n int, what string) ([]byte, error) {
	if b := r.fast(s, n); b != nil {
		return b, nil
	}
	return r.takeSlow(s, n, what)
}

func (r *Reader) takeSlow(s, n int, what string) ([]byte, error) {
	for {
		if o := r.off[s]; o+n <= r.end[s] {
			r.off[s] = o + n
			return r.buf[o : o+n], nil
		}
		if r.bulkLeft > 0 && r.bulkSec == s {
			b := r.scr[:n]
			if err := r.fill(b, "bulk packet body"); err != nil {
				return nil, err
			}
			if err := r.bulkRead(int64(n)); err != nil {
				return nil, err
			}
			return b, nil
		}
		if err := r.advance(s, what); err != nil {
			return nil, err
		}
	}
}

// advance moves to the next packet when section s is exhausted, unless the
// read cannot be the one that was written.
func (r *Reader) advance(s int, what string) error {
	if r.err != nil {
		return r.err
	}
	if !r.inMsg {
		return fmt.Errorf("%w: reading %s: no message is open (call Next first)", ErrShortMessage, what)
	}
	if rem := r.unread(); rem != "" {
		return mismatchf("reading %s, but the packet still holds unread %s; reads must mirror the writes", what, rem)
	}
	if r.last {
		return fmt.Errorf("%w: reading %s: all %d bytes of the message have been read", ErrShortMessage, what, r.consumed)
	}
	return r.nextPacket()
}

// unread describes the data left in the current packet ("" if none).
func (r *Reader) unread() string {
	var parts []string
	for i := range numSections {
		if n := (r.end[i] - r.off[i]) / secSize[i]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s value(s)", n, secDesc[i]))
		}
	}
	if r.bulkLeft > 0 {
		parts = append(parts, fmt.Sprintf("%d %s value(s)", r.bulkLeft/int64(secSize[r.bulkSec]), secDesc[r.bulkSec]))
	}
	return strings.Join(parts, " and ")
}

// readInto fills dst (elements of esz bytes) from section s, across packets,
// converting to native order. Bulk data is read straight into dst.
func (r *Reader) readInto(s int, dst []byte, esz int, what string) error {
	for len(dst) > 0 {
		if o, e := r.off[s], r.end[s]; o < e {
			n := min(e-o, len(dst))
			convertCopy(dst[:n], r.buf[o:o+n], esz, r.swap)
			r.off[s] = o + n
			dst = dst[n:]
			continue
		}
		if r.bulkLeft > 0 && r.bulkSec == s {
			n := int(min(r.bulkLeft, int64(len(dst))))
			if err := r.fill(dst[:n], "bulk packet body"); err != nil {
				return err
			}
			if r.swap && esz > 1 {
				swapCopy(dst[:n], dst[:n], esz)
			}
			if err := r.bulkRead(int64(n)); err != nil {
				return err
			}
			dst = dst[n:]
			continue
		}
		if err := r.advance(s, what); err != nil {
			return err
		}
	}
	return nil
}

// skipIn discards n bytes of section s, across packets.
func (r *Reader) skipIn(s int, n int64, what string) error {
	for n > 0 {
		if o, e := r.off[s], r.end[s]; o < e {
			k := int(min(int64(e-o), n))
			r.off[s] = o + k
			n -= int64(k)
			continue
		}
		if r.bulkLeft > 0 && r.bulkSec == s {
			k := min(r.bulkLeft, n)
			if err := r.discard(k); err != nil {
				return err
			}
			if err := r.bulkRead(k); err != nil {
				return err
			}
			n -= k
			continue
		}
		if err := r.advance(s, what); err != nil {
			return err
		}
	}
	return nil
}

// discard skips n bytes of the stream.
func (r *Reader) discard(n int64) error {
	for n > 0 {
		k := int(min(n, 1<<30))
		var got int
		var err error
		if r.disc != nil {
			got, err = r.disc.Discard(k)
		} else {
			if r.skip == nil {
				r.skip = make([]byte, skipBufSize)
			}
			got, err = io.ReadFull(r.src, r.skip[:min(k, len(r.skip))])
		}
		r.consumed += int64(got)
		n -= int64(got)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return r.fail(corruptf("truncated bulk packet body: the stream ended %d bytes early", n))
			}
			return r.fail(fmt.Errorf("serialization: skipping bulk packet body: %w", err))
		}
	}
	return nil
}

// budget is the most data the rest of the message can still hold: what
// the limit allows beyond the packets announced so far, plus the unread
// data of the current packet. Reads allocate no more than this.
func (r *Reader) budget() int64 {
	b := r.cfg.maxMessage - r.msgBytes + r.bulkLeft
	for i := range numSections {
		b += int64(r.end[i] - r.off[i])
	}
	return b
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
	return nil
}
