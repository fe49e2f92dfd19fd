package serialization

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// The hand-written part of the primitive writers: byte order, strings, and
// the helpers of the fixed-size Write methods, which are generated
// (writer_prim_gen.go, see generate.go).

// put16, put32 and put64 store v in the wire order.
func (w *Writer) put16(b []byte, v uint16) {
	if w.swap {
		v = bits.ReverseBytes16(v)
	}
	binary.NativeEndian.PutUint16(b, v)
}

func (w *Writer) put32(b []byte, v uint32) {
	if w.swap {
		v = bits.ReverseBytes32(v)
	}
	binary.NativeEndian.PutUint32(b, v)
}

func (w *Writer) put64(b []byte, v uint64) {
	if w.swap {
		v = bits.ReverseBytes64(v)
	}
	binary.NativeEndian.PutUint64(b, v)
}

// isData reports whether the kind allows data calls (a cheap inline check;
// the error comes from Kind.needData).
func (w *Writer) isData() bool { return w.kind == KindData || w.kind == KindObject }

// WriteString writes a string as an int32 length and its bytes. A long
// string is sent straight from its memory, like a bulk slice.
func (w *Writer) WriteString(s string) error {
	if !w.isData() {
		return w.kind.needData("WriteString")
	}
	if err := w.ready(); err != nil {
		return err
	}
	p := w.plan()
	p.string(len(s))
	if err := w.checkString(p, len(s)); err != nil {
		return err
	}
	return w.emitString(s)
}

// string adds a string to the plan.
func (p *plan) string(n int) {
	p.small(4, 4)
	p.arr(int64(n), 1)
}

// checkString refuses strings too long for their int32 length or the
// message limit.
func (w *Writer) checkString(p plan, n int) error {
	if n > math.MaxInt32 {
		return w.tooLarge("a string of more than 2^31-1 bytes", int64(n))
	}
	return w.check(p, "a string")
}

func (w *Writer) emitString(s string) error {
	b, err := w.space(secI32, 4, 4)
	if err != nil {
		return err
	}
	w.put32(b, uint32(len(s)))
	return w.emitArr(secI8, stringBytes(s), 1)
}

// emitInt64s writes values as consecutive int64s in as few space calls as
// the packets allow.
func (w *Writer) emitInt64s(next func(i int) int64, n int) error {
	for i := 0; i < n; {
		b, err := w.space(secI64, 8*(n-i), 8)
		if err != nil {
			return err
		}
		for j := 0; j+8 <= len(b); j += 8 {
			w.put64(b[j:], uint64(next(i)))
			i++
		}
	}
	return nil
}
