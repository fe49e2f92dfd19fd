package serialization

import (
	"fmt"
	"unsafe"
)

// WriteArray writes the elements of a primitive slice, or of a 2-D slice of
// one, so that ReadArray can fill a slice of the same length (shape). It
// accepts []T and [][]T for T in bool, byte (uint8), int8, int16, uint16,
// int32, uint32, int64, uint64, int, uint, float32 and float64. A 1-D slice
// is sent without its length: the reader supplies it, as in Ibis. A 2-D
// slice is sent as its row count, every row's length, and the rows; rows may
// be ragged.
//
// Slices of at least the bulk threshold are sent straight from their memory,
// so the caller must not modify the slice until Flush or Finish returns.
// KindByte allows only []byte.
func (w *Writer) WriteArray(slice any) error {
	if b, ok := slice.([]byte); ok {
		return writeSlice(w, b, eUint8, false)
	}
	if !w.isData() {
		return w.kind.needData("WriteArray(" + typeName(slice) + ")")
	}
	handled, err := w.writeArray(slice, false)
	if !handled {
		return fmt.Errorf("%w: WriteArray: %s is not a slice or 2-D slice of a primitive type (WriteObject takes other values)",
			ErrUnsupported, typeName(slice))
	}
	return err
}

// sizeOf is the in-memory size of T.
func sizeOf[T any]() int {
	var zero T
	return int(unsafe.Sizeof(zero))
}

// isWide reports whether T is narrower in memory than on the wire: int and
// uint on 32-bit machines, which travel as 64-bit values and so cannot be
// sent as byte views.
func isWide[T Primitive](c elemCode) bool { return sizeOf[T]() != secSize[elems[c].sec] }

// wideAt returns s[i], a 32-bit int or uint, widened to 64 bits.
func wideAt[T Primitive](s []T, i int, c elemCode) int64 {
	p := unsafe.Pointer(&s[i])
	if c == eInt {
		return int64(*(*int32)(p))
	}
	return int64(*(*uint32)(p))
}

// slice adds a slice of n elements to the plan.
func (p *plan) slice(n int, esz int, wide bool) {
	if wide {
		p.small(int64(n)*8, 8)
		return
	}
	p.arr(int64(n)*int64(esz), int64(esz))
}

// writeSlice writes one slice; tagged adds the object tag and the length
// (-1 for a nil slice).
func writeSlice[T Primitive](w *Writer, s []T, c elemCode, tagged bool) error {
	if err := w.ready(); err != nil {
		return err
	}
	sec := elems[c].sec
	esz := secSize[sec]
	wide := isWide[T](c)
	p := w.plan()
	if tagged {
		p.small(1, 1)
		p.small(8, 8)
	}
	p.slice(len(s), esz, wide)
	if f := p.final(); f > w.cfg.maxMessage {
		return w.tooLarge("a []"+elems[c].name, f)
	}
	if tagged {
		n := int64(len(s))
		if s == nil {
			n = -1
		}
		if err := w.emitTag(tagSlice + byte(c)); err != nil {
			return err
		}
		if err := w.emitInt64s(func(int) int64 { return n }, 1); err != nil {
			return err
		}
	}
	return emitRow(w, s, c, wide)
}

// emitRow writes the elements of one slice.
func emitRow[T Primitive](w *Writer, s []T, c elemCode, wide bool) error {
	if wide {
		return w.emitInt64s(func(i int) int64 { return wideAt(s, i, c) }, len(s))
	}
	sec := elems[c].sec
	return w.emitArr(sec, AsBytes(s), secSize[sec])
}

// write2D writes a 2-D slice: the row count, every row's length, then the
// rows. Writing all lengths first lets the reader check the shape before it
// stores any element. tagged adds the object tag and writes -1 as the row
// count of a nil slice and as the length of a nil row.
func write2D[T Primitive](w *Writer, rows [][]T, c elemCode, tagged bool) error {
	if err := w.ready(); err != nil {
		return err
	}
	sec := elems[c].sec
	esz := secSize[sec]
	wide := isWide[T](c)
	p := w.plan()
	if tagged {
		p.small(1, 1)
	}
	p.small(8*(int64(len(rows))+1), 8)
	for _, r := range rows {
		p.slice(len(r), esz, wide)
	}
	if f := p.final(); f > w.cfg.maxMessage {
		return w.tooLarge("a [][]"+elems[c].name, f)
	}
	count := int64(len(rows))
	if tagged {
		if rows == nil {
			count = -1
		}
		if err := w.emitTag(tagSlice2D + byte(c)); err != nil {
			return err
		}
	}
	err := w.emitInt64s(func(i int) int64 {
		if i == 0 {
			return count
		}
		if tagged && rows[i-1] == nil {
			return -1
		}
		return int64(len(rows[i-1]))
	}, len(rows)+1)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := emitRow(w, r, c, wide); err != nil {
			return err
		}
	}
	return nil
}
