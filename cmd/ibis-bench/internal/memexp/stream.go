package memexp

import (
	"bytes"
	"fmt"

	"github.com/ibisgo/ibis/serialization"
)

// payload is what a stream case sends as one message: a slice or a tree.
// Each bench gets its own payload, so the output of one case never shows
// up in the check of another.
type payload interface {
	// write writes the payload to w (without finishing the message).
	write(w *serialization.Writer) error
	// read reads the payload from r into the payload's output.
	read(r *serialization.Reader) error
	// clearOut forgets the output, so that checkOut sees only later reads.
	clearOut()
	// checkOut compares the output with the original values.
	checkOut() error
}

// encodeMessage writes p as one message of the given kind and order and
// returns its bytes.
func encodeMessage(p payload, kind serialization.Kind, order Order) ([]byte, error) {
	sink := &memSink{keep: true}
	w := serialization.NewWriter(kind, sink, serialization.WithByteOrder(order.ByteOrder()))
	if err := p.write(w); err != nil {
		return nil, err
	}
	n, err := w.Finish()
	if err != nil {
		return nil, err
	}
	if n != int64(len(sink.buf)) {
		return nil, fmt.Errorf("%w: Finish reported %d bytes, the sink got %d", ErrMismatch, n, len(sink.buf))
	}
	return sink.buf, nil
}

// decodeMessage reads msg as one message into p's output and checks it.
func decodeMessage(p payload, kind serialization.Kind, msg []byte, order Order) error {
	if len(msg) < serialization.HeaderSize || msg[0] != serialization.Magic {
		return fmt.Errorf("%w: the message does not start with a packet header", ErrMismatch)
	}
	if got, want := orderOf(msg[1]), order.ByteOrder().String(); got != want {
		return fmt.Errorf("%w: the message is in %s, want %s", ErrMismatch, got, want)
	}
	p.clearOut()
	r := serialization.NewReader(kind, bytes.NewReader(msg))
	if err := r.Next(); err != nil {
		return fmt.Errorf("%w: decoding the written message: %w", ErrMismatch, err)
	}
	if err := p.read(r); err != nil {
		return fmt.Errorf("%w: decoding the written message: %w", ErrMismatch, err)
	}
	if err := r.Finish(); err != nil {
		return fmt.Errorf("%w: decoding the written message: %w", ErrMismatch, err)
	}
	if r.Count() != int64(len(msg)) {
		return fmt.Errorf("%w: the message has %d bytes, the reader consumed %d", ErrMismatch, len(msg), r.Count())
	}
	return p.checkOut()
}

// orderOf names the byte-order field of a packet header the way
// binary.ByteOrder.String does.
func orderOf(b byte) string {
	switch b {
	case 0:
		return "LittleEndian"
	case 1:
		return "BigEndian"
	}
	return fmt.Sprintf("unknown byte order %d", b)
}

// streamWrite returns a bench that writes p as one message per operation
// with a Writer of the given kind and order into an in-memory sink (which
// copies the bytes with copySink, and only counts them otherwise), and the
// size of that message on the wire.
func streamWrite(name string, p payload, kind serialization.Kind, order Order, copySink bool) (*bench, int64, error) {
	msg, err := encodeMessage(p, kind, order)
	if err != nil {
		return nil, 0, fmt.Errorf("memexp: %s: %w", name, err)
	}
	sink := &memSink{keep: copySink}
	w := serialization.NewWriter(kind, sink, serialization.WithByteOrder(order.ByteOrder()))
	var last int64
	run := func(k int) error {
		for range k {
			sink.begin()
			if err := p.write(w); err != nil {
				w.Reset()
				return err
			}
			n, err := w.Finish()
			if err != nil {
				return err
			}
			last = n
		}
		return nil
	}
	b := &bench{
		name:  name,
		reset: func() { sink.begin(); last = 0 },
		run:   run,
		check: func() error {
			if !copySink { // capture one more message to see what the Writer produces
				sink.keep = true
				err := run(1)
				sink.keep = false
				if err != nil {
					return err
				}
			}
			if last != int64(len(sink.buf)) || last != sink.n {
				return fmt.Errorf("%w: Finish reported %d bytes, the sink got %d", ErrMismatch, last, sink.n)
			}
			return decodeMessage(p, kind, sink.buf, order)
		},
	}
	return b, int64(len(msg)), nil
}

// streamRead returns a bench that reads p, written once with the given kind
// and order, from memory with a Reader, one message per operation, and the
// size of that message.
func streamRead(name string, p payload, kind serialization.Kind, order Order) (*bench, int64, error) {
	msg, err := encodeMessage(p, kind, order)
	if err != nil {
		return nil, 0, fmt.Errorf("memexp: %s: %w", name, err)
	}
	// The message itself must be right, or the reads would be timed on
	// wrong input.
	if err := decodeMessage(p, kind, msg, order); err != nil {
		return nil, 0, fmt.Errorf("memexp: %s: %w", name, err)
	}
	src := bytes.NewReader(msg)
	r := serialization.NewReader(kind, src)
	b := &bench{
		name:  name,
		reset: p.clearOut,
		run: func(k int) error {
			for range k {
				src.Reset(msg)
				if err := r.Next(); err != nil {
					return err
				}
				if err := p.read(r); err != nil {
					return err
				}
				if err := r.Finish(); err != nil {
					return err
				}
			}
			return nil
		},
		check: func() error {
			if r.Count() != int64(len(msg)) {
				return fmt.Errorf("%w: the message has %d bytes, the reader consumed %d", ErrMismatch, len(msg), r.Count())
			}
			return p.checkOut()
		},
	}
	return b, int64(len(msg)), nil
}

// arrayPayload is a slice sent with WriteArray (data) or WriteObject
// (object).
type arrayPayload[T serialization.Primitive] struct {
	name   string
	object bool
	src    []T
	dst    []T
	vsrc   any // src as an interface, converted once so the timed loop does not allocate
	vdst   any
}

func newArrayPayload[T serialization.Primitive](name string, n int, object bool, seed uint64) *arrayPayload[T] {
	p := &arrayPayload[T]{name: name, object: object, src: makeData[T](n, seed), dst: make([]T, n)}
	p.vsrc, p.vdst = p.src, p.dst
	return p
}

func (p *arrayPayload[T]) write(w *serialization.Writer) error {
	if p.object {
		return w.WriteObject(p.vsrc)
	}
	return w.WriteArray(p.vsrc)
}

// read fills the caller's slice with ReadArray (data), or receives a new
// slice with ReadObject into a nil destination (object): the object
// serialization does not know the length in advance, and pays for
// allocating the slice, as Ibis's readObject does.
func (p *arrayPayload[T]) read(r *serialization.Reader) error {
	if p.object {
		p.dst = nil
		return r.ReadObject(&p.dst)
	}
	return r.ReadArray(p.vdst)
}

func (p *arrayPayload[T]) clearOut() {
	if p.object {
		p.dst = nil
		return
	}
	clear(p.dst)
}

func (p *arrayPayload[T]) checkOut() error { return checkSame("decoded "+p.name, p.dst, p.src) }
