package mpj

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"

	"github.com/ibisgo/ibis/ipl"
)

// Pack appends buf (any point-to-point buffer: a primitive slice, a 2-D slice, a slice of
// objects) to dst as one self-describing record and returns the extended slice, as
// MPI_Pack does with a position: several buffers of different types go into one []byte,
// which travels as an ordinary []byte message and is taken apart with Unpack in the same
// order. The record is its element type (one byte, the Datatype), the element count (an
// unsigned varint), then the elements little-endian (bool as one byte 0 or 1, int and uint
// as 8 bytes; a 2-D slice's rows one after the other); for objects, between count and data,
// the element type's name (varint length, bytes) and, as data, the length and bytes of
// their msgpack encoding.
func Pack(dst []byte, buf any) ([]byte, error) {
	b, err := p2pBuf(buf)
	if err != nil {
		return dst, err
	}
	dst = append(dst, byte(b.dtype))
	dst = binary.AppendUvarint(dst, uint64(b.n))
	if b.dtype == Object {
		data, err := encodeObjects(b.objs, b.n)
		if err != nil {
			return dst, err
		}
		dst = binary.AppendUvarint(dst, uint64(len(b.elem)))
		dst = append(dst, b.elem...)
		dst = binary.AppendUvarint(dst, uint64(len(data)))
		return append(dst, data...), nil
	}
	for _, seg := range b.segments() {
		dst = appendLE(dst, seg)
	}
	return dst, nil
}

// PackSize returns the number of bytes Pack appends for buf (MPI_Pack_size, exact here),
// to size a buffer for several Packs. For objects it encodes them to know.
func PackSize(buf any) (int, error) {
	b, err := p2pBuf(buf)
	if err != nil {
		return 0, err
	}
	if b.dtype == Object {
		out, err := Pack(nil, buf)
		return len(out), err
	}
	var tmp [binary.MaxVarintLen64]byte
	return 1 + binary.PutUvarint(tmp[:], uint64(b.n)) + b.n*b.dtype.size(), nil
}

// Unpack takes the record at the start of src (written by Pack) into buf, which must be of
// the record's element type (else an error matching ErrTypeMismatch) and have room for its
// elements (else ErrTruncated; a 2-D buffer is filled row by row), and returns the rest of
// src and the element count. Data that Pack did not write fails with ErrMalformed, never
// a panic, and Unpack allocates nothing beyond what the objects it decodes need.
func Unpack(src []byte, buf any) (rest []byte, n int, err error) {
	b, err := p2pBuf(buf)
	if err != nil {
		return src, 0, err
	}
	if len(src) == 0 {
		return src, 0, fmt.Errorf("%w: no record left", ErrMalformed)
	}
	dt := Datatype(src[0])
	if dt == 0 || dt >= numDatatypes {
		return src, 0, fmt.Errorf("%w: unknown element type %d", ErrMalformed, src[0])
	}
	count, k := binary.Uvarint(src[1:])
	if k <= 0 {
		return src, 0, fmt.Errorf("%w: the element count is cut short", ErrMalformed)
	}
	p := src[1+k:]
	elem := ""
	var objData []byte
	size := uint64(dt.size())
	if dt == Object {
		nameLen, k := binary.Uvarint(p)
		if k <= 0 || nameLen > maxElemName || nameLen > uint64(len(p)-k) {
			return src, 0, fmt.Errorf("%w: the element type name is cut short or too long", ErrMalformed)
		}
		elem, p = string(p[k:k+int(nameLen)]), p[k+int(nameLen):]
		dataLen, k := binary.Uvarint(p)
		if k <= 0 || dataLen > uint64(len(p)-k) {
			return src, 0, fmt.Errorf("%w: the objects' encoding is cut short", ErrMalformed)
		}
		p, size = p[k:], 0
		if count > dataLen { // every value takes at least a byte
			return src, 0, fmt.Errorf("%w: %d objects in %d bytes", ErrMalformed, count, dataLen)
		}
		objData, p = p[:dataLen], p[dataLen:]
	} else if count > uint64(len(p))/size {
		return src, 0, fmt.Errorf("%w: %d elements of %s in %d bytes", ErrMalformed, count, dt, len(p))
	}
	if dt != b.dtype || elem != b.elem {
		what := dt.String()
		if dt == Object {
			what = "objects of type " + elem
		}
		return src, 0, fmt.Errorf("%w: mpj: unpacking %s into a %s", ipl.ErrTypeMismatch, what, b.kind())
	}
	if count > uint64(b.n) {
		return src, 0, fmt.Errorf("%w: unpacking %d elements into a buffer of %d", ErrTruncated, count, b.n)
	}
	n = int(count)
	if dt == Object {
		if err := decodeObjects(objData, b.objs, n); err != nil {
			return src, 0, err
		}
		return p, n, nil
	}
	left := n
	for _, seg := range b.segments() {
		_, k, _ := bufInfo(seg)
		k = min(k, left)
		if err := decodeLE(sliceBuf(seg, 0, k), p[:k*int(size)]); err != nil {
			return src, 0, err
		}
		p, left = p[k*int(size):], left-k
		if left == 0 {
			break
		}
	}
	return p, n, nil
}

// segments returns the 1-D slices that make up a primitive buffer, in order.
func (b *pbuf) segments() []any {
	if b.rows != nil {
		return b.rows
	}
	return []any{b.v}
}

// appendLE appends the elements of a 1-D primitive slice little-endian.
func appendLE(dst []byte, seg any) []byte {
	le := binary.LittleEndian
	switch s := seg.(type) {
	case nil:
	case []bool:
		for _, v := range s {
			var b byte
			if v {
				b = 1
			}
			dst = append(dst, b)
		}
	case []byte:
		dst = append(dst, s...)
	case []int8:
		for _, v := range s {
			dst = append(dst, byte(v))
		}
	case []int16:
		for _, v := range s {
			dst = le.AppendUint16(dst, uint16(v))
		}
	case []uint16:
		for _, v := range s {
			dst = le.AppendUint16(dst, v)
		}
	case []int32:
		for _, v := range s {
			dst = le.AppendUint32(dst, uint32(v))
		}
	case []uint32:
		for _, v := range s {
			dst = le.AppendUint32(dst, v)
		}
	case []float32:
		for _, v := range s {
			dst = le.AppendUint32(dst, math.Float32bits(v))
		}
	case []int64:
		for _, v := range s {
			dst = le.AppendUint64(dst, uint64(v))
		}
	case []uint64:
		for _, v := range s {
			dst = le.AppendUint64(dst, v)
		}
	case []int:
		for _, v := range s {
			dst = le.AppendUint64(dst, uint64(v))
		}
	case []uint:
		for _, v := range s {
			dst = le.AppendUint64(dst, uint64(v))
		}
	case []float64:
		for _, v := range s {
			dst = le.AppendUint64(dst, math.Float64bits(v))
		}
	default:
		panic(fmt.Sprintf("mpj: appendLE of unchecked %s", reflect.TypeOf(seg)))
	}
	return dst
}

// decodeLE fills seg from p, which holds exactly len(seg) elements little-endian.
func decodeLE(seg any, p []byte) error {
	le := binary.LittleEndian
	switch s := seg.(type) {
	case nil:
	case []bool:
		for i := range s {
			if p[i] > 1 {
				return fmt.Errorf("%w: a bool packed as %d", ErrMalformed, p[i])
			}
			s[i] = p[i] == 1
		}
	case []byte:
		copy(s, p)
	case []int8:
		for i := range s {
			s[i] = int8(p[i])
		}
	case []int16:
		for i := range s {
			s[i] = int16(le.Uint16(p[2*i:]))
		}
	case []uint16:
		for i := range s {
			s[i] = le.Uint16(p[2*i:])
		}
	case []int32:
		for i := range s {
			s[i] = int32(le.Uint32(p[4*i:]))
		}
	case []uint32:
		for i := range s {
			s[i] = le.Uint32(p[4*i:])
		}
	case []float32:
		for i := range s {
			s[i] = math.Float32frombits(le.Uint32(p[4*i:]))
		}
	case []int64:
		for i := range s {
			s[i] = int64(le.Uint64(p[8*i:]))
		}
	case []uint64:
		for i := range s {
			s[i] = le.Uint64(p[8*i:])
		}
	case []int:
		for i := range s {
			s[i] = int(le.Uint64(p[8*i:]))
		}
	case []uint:
		for i := range s {
			s[i] = uint(le.Uint64(p[8*i:]))
		}
	case []float64:
		for i := range s {
			s[i] = math.Float64frombits(le.Uint64(p[8*i:]))
		}
	default:
		panic(fmt.Sprintf("mpj: decodeLE of unchecked %s", reflect.TypeOf(seg)))
	}
	return nil
}
