package serialization

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// The hand-written part of the primitive readers: byte order, lengths,
// strings, and the helpers of the fixed-size Read methods, which are
// generated (reader_prim_gen.go, see generate.go).

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

// readU64 reads a 64-bit value; what names it in errors.
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
