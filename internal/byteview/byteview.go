// Package byteview views slices of primitive values as bytes and converts them to and
// from a byte order, a 64-bit word at a time: the conversion of package serialization's
// packets, shared with the conversion experiment of cmd/ibis-bench (which compares it
// with a per-element loop) without making it public API.
package byteview

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// Primitive is the set of element types whose slices can be viewed as bytes.
type Primitive interface {
	~bool | ~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 |
		~int64 | ~uint64 | ~int | ~uint | ~float32 | ~float64
}

// AsBytes returns the memory of s as a byte slice, in the machine's byte order, without
// copying: writes through either slice are visible in the other.
func AsBytes[T Primitive](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// nativeLittle reports whether this machine stores integers little endian.
var nativeLittle = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// IsLittle probes an arbitrary binary.ByteOrder implementation.
func IsLittle(o binary.ByteOrder) bool {
	var b [2]byte
	o.PutUint16(b[:], 0x0102)
	return b[0] == 0x02
}

// IsNative reports whether order is the machine's byte order.
func IsNative(order binary.ByteOrder) bool { return IsLittle(order) == nativeLittle }

// NativeLittle reports whether the machine is little endian.
func NativeLittle() bool { return nativeLittle }

// SwapCopy copies src to dst reversing the bytes of every esz-byte element. len(dst)
// must be at least len(src), a multiple of esz; dst may be src (in-place swap).
func SwapCopy(dst, src []byte, esz int) {
	n := len(src)
	dst = dst[:n]
	i := 0
	switch esz {
	case 8:
		for ; i+8 <= n; i += 8 {
			binary.LittleEndian.PutUint64(dst[i:], bits.ReverseBytes64(binary.LittleEndian.Uint64(src[i:])))
		}
	case 4:
		for ; i+8 <= n; i += 8 {
			x := binary.LittleEndian.Uint64(src[i:])
			binary.LittleEndian.PutUint64(dst[i:], bits.RotateLeft64(bits.ReverseBytes64(x), 32))
		}
		if i+4 <= n {
			binary.LittleEndian.PutUint32(dst[i:], bits.ReverseBytes32(binary.LittleEndian.Uint32(src[i:])))
		}
	case 2:
		const m = 0x00FF00FF00FF00FF
		for ; i+8 <= n; i += 8 {
			x := binary.LittleEndian.Uint64(src[i:])
			binary.LittleEndian.PutUint64(dst[i:], (x>>8)&m|(x&m)<<8)
		}
		for ; i+2 <= n; i += 2 {
			binary.LittleEndian.PutUint16(dst[i:], bits.ReverseBytes16(binary.LittleEndian.Uint16(src[i:])))
		}
	default:
		copy(dst, src)
	}
}

// ConvertCopy copies src to dst, swapping element bytes when swap is set.
func ConvertCopy(dst, src []byte, esz int, swap bool) {
	if swap && esz > 1 {
		SwapCopy(dst, src, esz)
		return
	}
	copy(dst, src)
}

// Put converts min(len(src), len(dst)/size) elements of src into dst in the given order
// through a byte view (a memory copy in native order, a word-wise swap otherwise) and
// returns how many.
func Put[T Primitive](dst []byte, src []T, order binary.ByteOrder) int {
	var zero T
	esz := int(unsafe.Sizeof(zero))
	n := min(len(src), len(dst)/esz)
	ConvertCopy(dst, AsBytes(src[:n]), esz, !IsNative(order))
	return n
}

// Get is the inverse of Put.
func Get[T Primitive](dst []T, src []byte, order binary.ByteOrder) int {
	var zero T
	esz := int(unsafe.Sizeof(zero))
	n := min(len(dst), len(src)/esz)
	ConvertCopy(AsBytes(dst[:n]), src[:n*esz], esz, !IsNative(order))
	return n
}
