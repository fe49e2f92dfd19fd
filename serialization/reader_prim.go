package serialization

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"unsafe"
)

// get16, get32 and get64 load a value in the sender's order.
func (r *Reader) get16(b []byte) uint16 {
	v := binary.NativeEndian.Uint16(b)
	if r.swap {
		v = bits.ReverseBytes16(v)
	}
	return v
}

func (r *Reader) get32(b []byte) uint32 {
	v := binary.NativeEndian.Uint32(b)
	if r.swap {
		v = bits.ReverseBytes32(v)
	}
	return v
}

func (r *Reader) get64(b []byte) uint64 {
	v := binary.NativeEndian.Uint64(b)
	if r.swap {
		v = bits.ReverseBytes64(v)
	}
	return v
}

// isData reports whether the kind allows data calls.
func (r *Reader) isData() bool { return r.kind == KindData || r.kind == KindObject }

// ReadByte reads one byte. Every kind allows it.
func (r *Reader) ReadByte() (byte, error) {
	b := r.fast(secI8, 1)
	if b == nil {
		var err error
		if b, err = r.takeSlow(secI8, 1, "a byte"); err != nil {
			return 0, err
		}
	}
	return b[0], nil
}

// ReadBool reads a bool. A byte other than 0 or 1 is reported as ErrCorrupt
// (the stream's framing is intact; Finish still works).
func (r *Reader) ReadBool() (bool, error) {
	if !r.isData() {
		return false, r.kind.needData("ReadBool")
	}
	b := r.fast(secI8, 1)
	if b == nil {
		var err error
		if b, err = r.takeSlow(secI8, 1, "a bool"); err != nil {
			return false, err
		}
	}
	switch b[0] {
	case 0:
		return false, nil
	case 1:
		return true, nil
	}
	return true, corruptf("a bool is encoded as 0 or 1, got %d", b[0])
}

// ReadInt8 reads an int8.
func (r *Reader) ReadInt8() (int8, error) {
	if !r.isData() {
		return 0, r.kind.needData("ReadInt8")
	}
	b := r.fast(secI8, 1)
	if b == nil {
		var err error
		if b, err = r.takeSlow(secI8, 1, "an int8"); err != nil {
			return 0, err
		}
	}
	return int8(b[0]), nil
}

// ReadInt16 reads an int16.
func (r *Reader) ReadInt16() (int16, error) {
	if !r.isData() {
		return 0, r.kind.needData("ReadInt16")
	}
	b := r.fast(secI16, 2)
	if b == nil {
		var err error
		if b, err = r.takeSlow(secI16, 2, "an int16"); err != nil {
			return 0, err
		}
	}
	return int16(r.get16(b)), nil
}

// ReadUint16 reads a uint16.
func (r *Reader) ReadUint16() (uint16, error) {
	if !r.isData() {
		return 0, r.kind.needData("ReadUint16")
	}
	b := r.fast(secI16, 2)
	if b == nil {
		var err error
		if b, err = r.takeSlow(secI16, 2, "a uint16"); err != nil {
			return 0, err
		}
	}
	return r.get16(b), nil
}

// ReadInt32 reads an int32.
func (r *Reader) ReadInt32() (int32, error) {
	if !r.isData() {
		return 0, r.kind.needData("ReadInt32")
	}
	b := r.fast(secI32, 4)
	if b == nil {
		var err error
		if b, err = r.takeSlow(secI32, 4, "an int32"); err != nil {
			return 0, err
		}
	}
	return int32(r.get32(b)), nil
}

// ReadUint32 reads a uint32.
func (r *Reader) ReadUint32() (uint32, error) {
	if !r.isData() {
		return 0, r.kind.needData("ReadUint32")
	}
	b := r.fast(secI32, 4)
	if b == nil {
		var err error
		if b, err = r.takeSlow(secI32, 4, "a uint32"); err != nil {
			return 0, err
		}
	}
	return r.get32(b), nil
}

// ReadInt64 reads an int64.
func (r *Reader) ReadInt64() (int64, error) {
	if !r.isData() {
		return 0, r.kind.needData("ReadInt64")
	}
	b := r.fast(secI64, 8)
	if b == nil {
		var err error
		if b, err = r.takeSlow(secI64, 8, "an int64"); err != nil {
			return 0, err
		}
	}
	return int64(r.get64(b)), nil
}

// ReadUint64 reads a uint64.
func (r *Reader) ReadUint64() (uint64, error) {
	if !r.isData() {
		return 0, r.kind.needData("ReadUint64")
	}
	b := r.fast(secI64, 8)
	if b == nil {
		var err error
		if b, err = r.takeSlow(secI64, 8, "a uint64"); err != nil {
			return 0, err
		}
	}
	return r.get64(b), nil
}

// ReadInt reads an int (sent as 64 bits). On a 32-bit machine a value that
// does not fit is reported as ErrTooLarge.
func (r *Reader) ReadInt() (int, error) {
	if !r.isData() {
		return 0, r.kind.needData("ReadInt")
	}
	v, err := r.readU64("an int")
	if err != nil {
		return 0, err
	}
	if int64(int(int64(v))) != int64(v) {
		return 0, fmt.Errorf("%w: int value %d does not fit in a %d-bit int", ErrTooLarge, int64(v), bits.UintSize)
	}
	return int(int64(v)), nil
}

// ReadUint reads a uint (sent as 64 bits). On a 32-bit machine a value that
// does not fit is reported as ErrTooLarge.
func (r *Reader) ReadUint() (uint, error) {
	if !r.isData() {
		return 0, r.kind.needData("ReadUint")
	}
	v, err := r.readU64("a uint")
	if err != nil {
		return 0, err
	}
	if uint64(uint(v)) != v {
		return 0, fmt.Errorf("%w: uint value %d does not fit in a %d-bit uint", ErrTooLarge, v, bits.UintSize)
	}
	return uint(v), nil
}

// ReadFloat32 reads a float32.
func (r *Reader) ReadFloat32() (float32, error) {
	if !r.isData() {
		return 0, r.kind.needData("ReadFloat32")
	}
	b := r.fast(secF32, 4)
	if b == nil {
		var err error
		if b, err = r.takeSlow(secF32, 4, "a float32"); err != nil {
			return 0, err
		}
	}
	return math.Float32frombits(r.get32(b)), nil
}

// ReadFloat64 reads a float64.
func (r *Reader) ReadFloat64() (float64, error) {
	if !r.isData() {
		return 0, r.kind.needData("ReadFloat64")
	}
	b := r.fast(secF64, 8)
	if b == nil {
		var err error
		if b, err = r.takeSlow(secF64, 8, "a float64"); err != nil {
			return 0, err
		}
	}
	return math.Float64frombits(r.get64(b)), nil
}

func (r *Reader) readU64(what string) (uint64, error) {
	b := r.fast(secI64, 8)
	if b == nil {
		var err error
		if b, err = r.takeSlow(secI64, 8, what); err != nil {
			return 0, err
		}
	}
	return r.get64(b), nil
}

// readLen reads an int64 length field: -1 when nilOK (a nil slice),
// otherwise a non-negative count.
func (r *Reader) readLen(what string, nilOK bool) (int64, error) {
	v, err := r.readU64(what)
	if err != nil {
		return 0, err
	}
	n := int64(v)
	if n < 0 && !(nilOK && n == -1) {
		return 0, corruptf("invalid %s %d", what, n)
	}
	return n, nil
}

// ReadString reads a string written by WriteString. It allocates the string
// as its bytes arrive, never more than the rest of the message can hold.
func (r *Reader) ReadString() (string, error) {
	if !r.isData() {
		return "", r.kind.needData("ReadString")
	}
	b := r.fast(secI32, 4)
	if b == nil {
		var err error
		if b, err = r.takeSlow(secI32, 4, "a string length"); err != nil {
			return "", err
		}
	}
	n := int32(r.get32(b))
	if n < 0 {
		return "", corruptf("negative string length %d", n)
	}
	if n == 0 {
		return "", nil
	}
	if o := r.off[secI8]; o+int(n) <= r.end[secI8] {
		r.off[secI8] = o + int(n)
		return string(r.buf[o : o+int(n)]), nil
	}
	data, err := readGrow[byte](r, nil, int64(n), eUint8, "string bytes")
	if err != nil {
		return "", err
	}
	return unsafe.String(unsafe.SliceData(data), len(data)), nil
}
