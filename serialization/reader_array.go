package serialization

import (
	"fmt"
	"math/bits"
	"unsafe"
)

// arrWhat and arr2What name slice types in error messages without
// allocating on the success path.
var arrWhat, arr2What [numElems]string

func init() {
	for c := range numElems {
		arrWhat[c] = "a []" + elems[c].name
		arr2What[c] = "a [][]" + elems[c].name
	}
}

// ReadArray fills dst, a slice or 2-D slice of the types WriteArray accepts,
// with exactly len(dst) elements. Data the writer sent as a bulk packet is
// read straight into dst's memory; a bulk packet may be consumed by several
// ReadArray calls with shorter destinations. For a 2-D slice the written
// shape (row count and every row's length) must equal dst's, or the error
// wraps ErrTypeMismatch, states both shapes, and the written slice is
// skipped so the next read is aligned. KindByte allows only []byte.
func (r *Reader) ReadArray(dst any) error {
	if b, ok := dst.([]byte); ok {
		return readSlice(r, b, eUint8)
	}
	if !r.isData() {
		return r.kind.needData("ReadArray(" + typeName(dst) + ")")
	}
	if handled, err := r.readArray(dst); handled {
		return err
	}
	return fmt.Errorf("%w: ReadArray: %s is not a slice or 2-D slice of a primitive type (ReadObject takes other values)",
		ErrUnsupported, typeName(dst))
}

// readSlice fills d with elements of type c.
func readSlice[T Primitive](r *Reader, d []T, c elemCode) error {
	if isWide[T](c) {
		return readWide(r, d, c)
	}
	sec := elems[c].sec
	err := r.readInto(sec, AsBytes(d), secSize[sec], arrWhat[c])
	if c == eBool {
		// Never leave a bool that is neither false nor true in memory.
		if berr := checkBools(AsBytes(d)); err == nil {
			err = berr
		}
	}
	return err
}

// checkBools normalises the bytes of a []bool to 0 or 1 and reports any
// that were neither.
func checkBools(b []byte) error {
	bad := -1
	for i, v := range b {
		if v > 1 {
			if bad < 0 {
				bad = i
			}
			b[i] = 1
		}
	}
	if bad >= 0 {
		return corruptf("a bool is encoded as 0 or 1, element %d is not", bad)
	}
	return nil
}

// readWide fills a slice of 32-bit ints or uints from 64-bit wire values.
func readWide[T Primitive](r *Reader, d []T, c elemCode) error {
	for i := range d {
		v, err := r.readU64(arrWhat[c])
		if err != nil {
			return err
		}
		p := unsafe.Pointer(&d[i])
		if c == eInt {
			if int64(int32(v)) != int64(v) {
				return fmt.Errorf("%w: int value %d does not fit in a %d-bit int", ErrTooLarge, int64(v), bits.UintSize)
			}
			*(*int32)(p) = int32(v)
		} else {
			if uint64(uint32(v)) != v {
				return fmt.Errorf("%w: uint value %d does not fit in a %d-bit uint", ErrTooLarge, v, bits.UintSize)
			}
			*(*uint32)(p) = uint32(v)
		}
	}
	return nil
}

// tooMuch is the error for a length the rest of the message cannot hold.
func (r *Reader) tooMuch(what string, n int64) error {
	return fmt.Errorf("%w: %w: %s of %d elements is more than the rest of the message can hold (%d bytes)",
		ErrCorrupt, ErrTooLarge, what, n, max(r.budget(), 0))
}

// readGrow reads n elements of type c into dst when it is long enough,
// otherwise into a new slice that grows as the data arrives: a length field
// is only a claim, so the allocation follows the bytes actually received
// (at most about twice them, plus growStep), never the claim alone.
func readGrow[T Primitive](r *Reader, dst []T, n int64, c elemCode, what string) ([]T, error) {
	sec := elems[c].sec
	esz := int64(secSize[sec])
	if n > r.budget()/esz {
		return nil, r.tooMuch(what, n)
	}
	if int64(len(dst)) >= n {
		dst = dst[:n]
		return dst, readSlice(r, dst, c)
	}
	avail := int64(r.end[sec]-r.off[sec]) / esz
	out := make([]T, min(n, max(avail, growStep/esz)))
	if err := readSlice(r, out, c); err != nil {
		return nil, err
	}
	for int64(len(out)) < n {
		old := len(out)
		out = append(out, make([]T, int(min(n, 2*int64(old)))-old)...)
		if err := readSlice(r, out[old:], c); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// shape summarises a 2-D shape: "3 rows of 4 elements".
func shape(rows, minLen, maxLen int64) string {
	switch {
	case rows == 0:
		return "0 rows"
	case minLen == maxLen:
		return fmt.Sprintf("%d rows of %d elements", rows, minLen)
	}
	return fmt.Sprintf("%d rows of %d to %d elements", rows, minLen, maxLen)
}

// read2D fills the rows of d after checking the written shape against it.
func read2D[T Primitive](r *Reader, d [][]T, c elemCode) error {
	what := arr2What[c]
	sec := elems[c].sec
	esz := int64(secSize[sec])
	count, err := r.readLen("2-D row count", false)
	if err != nil {
		return err
	}
	var minLen, maxLen, sum int64
	diffRow, diffLen := int64(-1), int64(0)
	for i := range count {
		l, err := r.readLen("2-D row length", false)
		if err != nil {
			return err
		}
		if l > r.budget()/esz-sum {
			return r.tooMuch(what, sum+l)
		}
		sum += l
		if i == 0 || l < minLen {
			minLen = l
		}
		maxLen = max(maxLen, l)
		if diffRow < 0 && i < int64(len(d)) && l != int64(len(d[i])) {
			diffRow, diffLen = i, l
		}
	}
	if count == int64(len(d)) && diffRow < 0 {
		for _, row := range d {
			if err := readSlice(r, row, c); err != nil {
				return err
			}
		}
		return nil
	}
	// Skip the written slice so that the next read is aligned.
	if err := r.skipIn(sec, sum*esz, what); err != nil {
		return err
	}
	var dMin, dMax int64
	for i, row := range d {
		l := int64(len(row))
		if i == 0 || l < dMin {
			dMin = l
		}
		dMax = max(dMax, l)
	}
	detail := ""
	if diffRow >= 0 {
		detail = fmt.Sprintf(" (row %d: %d elements written, %d in the destination)", diffRow, diffLen, len(d[diffRow]))
	}
	return mismatchf("reading %s: the written slice has %s, the destination has %s%s",
		what, shape(count, minLen, maxLen), shape(int64(len(d)), dMin, dMax), detail)
}
