package serialization

import (
	"bytes"
	"fmt"
	"net"

	"github.com/vmihailenco/msgpack/v5"
)

// Writer serializes one message at a time into packets for a Sink. It is
// reusable across messages without allocating and is not safe for
// concurrent use: a send port has one live message at a time.
//
// A write returns an error wrapping ErrUnsupported when the Kind does not
// allow it (nothing is written), ErrTooLarge when it would take the message
// over its limit (nothing is written), or the Sink's error, which is sticky:
// every later call returns it until Reset.
type Writer struct {
	kind      Kind
	sink      Sink
	cfg       writerConfig
	orderByte byte
	swap      bool   // the wire order is not native: swap every element
	cfgErr    error  // a construction error no Reset clears
	limitBy   string // whose limit cfg.maxMessage is, when SetMaxMessageSize set it

	cur   *packetBuf // the small packet being filled
	body  int        // bytes in cur
	limit int        // body bound of the write fast path; -1 forces the slow path

	sealed     int64 // wire bytes of this message's sealed packets
	finished   bool  // Finish has run; the next write starts a message
	pendingMsg bool  // pending holds packets of the current message
	sentAny    bool  // packets of the current message reached the Sink
	endOwed    bool  // pending starts with the End of an abandoned message
	err        error // sticky Sink error

	pending   net.Buffers
	held      []*packetBuf // sealed small packets referenced by pending
	heldBytes int
	free      []*packetBuf
	hdrs      []byte // headers of pending bulk packets
	scratch   []byte // byte-swapped bulk data in non-native order
	endHdr    [HeaderSize]byte

	objBuf bytes.Buffer
	enc    *msgpack.Encoder
	codec  encoder // the object codec's state (codec.go)
}

// NewWriter returns a Writer of the given kind that hands its packets to
// sink. Options tune packet sizes, the bulk threshold, the message limit,
// the byte order and the logger.
func NewWriter(kind Kind, sink Sink, opts ...WriterOption) *Writer {
	cfg := defaultWriterConfig()
	for _, o := range opts {
		if o != nil {
			o.applyWriter(&cfg)
		}
	}
	cfg.normalize()
	w := &Writer{kind: kind, sink: sink, cfg: cfg, cur: &packetBuf{}}
	if !isLittle(cfg.order) {
		w.orderByte = orderBig
	}
	w.swap = isLittle(cfg.order) != nativeLittle
	switch {
	case !kind.valid():
		w.cfgErr = fmt.Errorf("%w: unknown serialization kind %d", ErrUnsupported, int(kind))
	case isNilSink(sink):
		w.cfgErr = errNoSink
	}
	w.err = w.cfgErr
	putHeader(w.endHdr[:], w.orderByte, FlagEnd, &[numSections]uint32{})
	w.updateLimit()
	return w
}

// Kind returns the serialization kind the Writer was created with.
func (w *Writer) Kind() Kind { return w.kind }

// Count returns the bytes of the current message so far: the wire size of
// its sealed packets plus the data buffered in the open packet (without
// that packet's header and padding). After Finish it returns what Finish
// returned, until the next message starts.
func (w *Writer) Count() int64 { return w.sealed + int64(w.body) }

// Reset begins a new message: it drops everything written and not yet
// handed to the Sink and clears a sticky error. If packets of an unfinished
// message were already sent, an empty End packet is queued ahead of the next
// message so that the receiver sees the abandoned message end (short) rather
// than run into the next one. Further Resets before that End is sent keep it
// queued, exactly once.
func (w *Writer) Reset() {
	// An End queued by an earlier Reset and not yet sent is still owed: the
	// abandoned message is open at the receiver.
	abandoned := ((!w.finished && w.sentAny) || w.endOwed) && w.err == nil
	w.dropPending()
	w.cur.reset()
	w.body = 0
	w.sealed = 0
	w.finished = false
	w.pendingMsg = false
	w.sentAny = false
	w.err = w.cfgErr
	w.endOwed = abandoned
	if abandoned {
		w.pending = append(w.pending, w.endHdr[:])
	}
	w.updateLimit()
}

// Reached reports whether packets of the current message reached the Sink (a Flush, a
// packet filled), even where the Sink failed on a later one.
func (w *Writer) Reached() bool { return !w.finished && w.sentAny }

// Abandon ends the current message without sending what is still buffered, for a
// sender that cannot complete it. If packets of it were sent already (Flush, or a
// message larger than a packet), an End packet goes out now, so that the receiver
// sees the message end short (a read past what came fails) instead of waiting for the
// rest, and ended is true; of a message that sent no packet nothing reaches the Sink.
// The next write starts a new message.
func (w *Writer) Abandon() (ended bool, err error) {
	w.Reset()
	ended = w.endOwed
	return ended, w.send()
}

// Flush hands everything written so far to the Sink, without ending the
// message: the receiver can start reading while the message goes on. Since
// the message then needs a separate End packet, a Flush within 32 bytes of
// the message limit is refused with ErrTooLarge and changes nothing
// (Finish still works).
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if !w.finished && w.body > 0 {
		if f := w.sealed + 2*HeaderSize + pad8(int64(w.body)); f > w.cfg.maxMessage {
			return w.tooLarge("a flush (the message then needs an End packet of its own)", f)
		}
		w.seal(0)
	}
	return w.send()
}

// Finish ends the message: it hands the rest of it to the Sink, the last
// packet carrying the End flag, and returns the bytes the whole message put
// on the wire, headers and padding included. An empty message is one
// 32-byte packet. After Finish the Writer starts a new message with the next
// write (Reset is not needed). On a Sink error it returns 0 and the error.
func (w *Writer) Finish() (int64, error) {
	if err := w.ready(); err != nil {
		return 0, err
	}
	w.seal(FlagEnd)
	if err := w.send(); err != nil {
		return 0, err
	}
	w.finished = true
	w.sentAny = false
	w.updateLimit()
	return w.sealed, nil
}

// ready prepares the Writer for a write: it returns a sticky error, and
// after Finish it starts the next message.
func (w *Writer) ready() error {
	if w.err != nil {
		return w.err
	}
	if w.finished {
		w.finished = false
		w.sealed = 0
		w.updateLimit()
	}
	return nil
}

// updateLimit recomputes the body bound of the write fast path: the packet
// size, or less when the message limit is closer.
func (w *Writer) updateLimit() {
	if w.err != nil || w.finished {
		w.limit = -1
		return
	}
	l := int64(w.cfg.maxPacket)
	if room := (w.cfg.maxMessage - w.sealed - HeaderSize) &^ 7; room < l {
		l = room
	}
	w.limit = int(max(l, -1))
}

// SetMaxMessageSize changes the message limit set by WithMaxMessageSize; by, when not
// empty, says whose limit it is in the ErrTooLarge of a write it refuses. Call it
// between messages. A sender learns its receivers' limits only once connected: it
// lowers its own to theirs, so that a message they would refuse fails at the write
// instead of costing the connection.
func (w *Writer) SetMaxMessageSize(n int64, by string) {
	w.cfg.maxMessage = n
	w.cfg.normalize()
	w.limitBy = by
	w.updateLimit()
}

// fail records a sticky error.
func (w *Writer) fail(err error) error {
	w.err = err
	w.limit = -1
	return err
}
