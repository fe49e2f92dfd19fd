package serialization

import (
	"encoding/binary"
	"math"
	"math/bits"
)

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

// WriteByte writes one byte. Every kind allows it.
func (w *Writer) WriteByte(v byte) error {
	b := w.fast(secI8, 1)
	if b == nil {
		var err error
		if b, err = w.reserveSlow(secI8, 1); err != nil {
			return err
		}
	}
	b[0] = v
	return nil
}

// WriteBool writes a bool as one byte, 0 or 1.
func (w *Writer) WriteBool(v bool) error {
	if !w.isData() {
		return w.kind.needData("WriteBool")
	}
	b := w.fast(secI8, 1)
	if b == nil {
		var err error
		if b, err = w.reserveSlow(secI8, 1); err != nil {
			return err
		}
	}
	b[0] = 0
	if v {
		b[0] = 1
	}
	return nil
}

// WriteInt8 writes an int8.
func (w *Writer) WriteInt8(v int8) error {
	if !w.isData() {
		return w.kind.needData("WriteInt8")
	}
	b := w.fast(secI8, 1)
	if b == nil {
		var err error
		if b, err = w.reserveSlow(secI8, 1); err != nil {
			return err
		}
	}
	b[0] = byte(v)
	return nil
}

// WriteInt16 writes an int16.
func (w *Writer) WriteInt16(v int16) error {
	if !w.isData() {
		return w.kind.needData("WriteInt16")
	}
	b := w.fast(secI16, 2)
	if b == nil {
		var err error
		if b, err = w.reserveSlow(secI16, 2); err != nil {
			return err
		}
	}
	w.put16(b, uint16(v))
	return nil
}

// WriteUint16 writes a uint16.
func (w *Writer) WriteUint16(v uint16) error {
	if !w.isData() {
		return w.kind.needData("WriteUint16")
	}
	b := w.fast(secI16, 2)
	if b == nil {
		var err error
		if b, err = w.reserveSlow(secI16, 2); err != nil {
			return err
		}
	}
	w.put16(b, v)
	return nil
}

// WriteInt32 writes an int32.
func (w *Writer) WriteInt32(v int32) error {
	if !w.isData() {
		return w.kind.needData("WriteInt32")
	}
	b := w.fast(secI32, 4)
	if b == nil {
		var err error
		if b, err = w.reserveSlow(secI32, 4); err != nil {
			return err
		}
	}
	w.put32(b, uint32(v))
	return nil
}

// WriteUint32 writes a uint32.
func (w *Writer) WriteUint32(v uint32) error {
	if !w.isData() {
		return w.kind.needData("WriteUint32")
	}
	b := w.fast(secI32, 4)
	if b == nil {
		var err error
		if b, err = w.reserveSlow(secI32, 4); err != nil {
			return err
		}
	}
	w.put32(b, v)
	return nil
}

// WriteInt64 writes an int64.
func (w *Writer) WriteInt64(v int64) error {
	if !w.isData() {
		return w.kind.needData("WriteInt64")
	}
	b := w.fast(secI64, 8)
	if b == nil {
		var err error
		if b, err = w.reserveSlow(secI64, 8); err != nil {
			return err
		}
	}
	w.put64(b, uint64(v))
	return nil
}

// WriteUint64 writes a uint64.
func (w *Writer) WriteUint64(v uint64) error {
	if !w.isData() {
		return w.kind.needData("WriteUint64")
	}
	b := w.fast(secI64, 8)
	if b == nil {
		var err error
		if b, err = w.reserveSlow(secI64, 8); err != nil {
			return err
		}
	}
	w.put64(b, v)
	return nil
}

// WriteInt writes an int as 64 bits, whatever the size of int here, so that
// machines of different word sizes interoperate.
func (w *Writer) WriteInt(v int) error {
	if !w.isData() {
		return w.kind.needData("WriteInt")
	}
	b := w.fast(secI64, 8)
	if b == nil {
		var err error
		if b, err = w.reserveSlow(secI64, 8); err != nil {
			return err
		}
	}
	w.put64(b, uint64(int64(v)))
	return nil
}

// WriteUint writes a uint as 64 bits (see WriteInt).
func (w *Writer) WriteUint(v uint) error {
	if !w.isData() {
		return w.kind.needData("WriteUint")
	}
	b := w.fast(secI64, 8)
	if b == nil {
		var err error
		if b, err = w.reserveSlow(secI64, 8); err != nil {
			return err
		}
	}
	w.put64(b, uint64(v))
	return nil
}

// WriteFloat32 writes a float32 (its IEEE 754 bits, NaN payloads included).
func (w *Writer) WriteFloat32(v float32) error {
	if !w.isData() {
		return w.kind.needData("WriteFloat32")
	}
	b := w.fast(secF32, 4)
	if b == nil {
		var err error
		if b, err = w.reserveSlow(secF32, 4); err != nil {
			return err
		}
	}
	w.put32(b, math.Float32bits(v))
	return nil
}

// WriteFloat64 writes a float64 (its IEEE 754 bits, NaN payloads included).
func (w *Writer) WriteFloat64(v float64) error {
	if !w.isData() {
		return w.kind.needData("WriteFloat64")
	}
	b := w.fast(secF64, 8)
	if b == nil {
		var err error
		if b, err = w.reserveSlow(secF64, 8); err != nil {
			return err
		}
	}
	w.put64(b, math.Float64bits(v))
	return nil
}

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
