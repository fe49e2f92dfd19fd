package serialization

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// Primitive is the set of element types whose slices this package can view
// as bytes and send without conversion.
type Primitive interface {
	~bool | ~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 |
		~int64 | ~uint64 | ~int | ~uint | ~float32 | ~float64
}

// AsBytes returns the memory of s as a byte slice, in the machine's native
// byte order, without copying: writes through either slice are visible in
// the other. It is how a Writer sends a large slice straight from the
// caller's memory and how a Reader receives straight into it.
func AsBytes[T Primitive](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// stringBytes views the bytes of s without copying. The result must only be
// read.
func stringBytes(s string) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// isNative reports whether order is the machine's byte order.
func isNative(order binary.ByteOrder) bool { return isLittle(order) == nativeLittle }

// swapCopy copies src to dst reversing the bytes of every esz-byte element.
// len(dst) must equal len(src), a multiple of esz; dst may be src (in-place
// swap). It works a 64-bit word at a time where it can.
func swapCopy(dst, src []byte, esz int) {
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

// convertCopy copies src to dst, swapping element bytes when swap is set.
func convertCopy(dst, src []byte, esz int, swap bool) {
	if swap && esz > 1 {
		swapCopy(dst, src, esz)
		return
	}
	copy(dst, src)
}

// putView converts src into dst in the given order through a byte view: a
// plain memory copy in native order, a word-wise swap otherwise.
func putView[T Primitive](dst []byte, src []T, order binary.ByteOrder) int {
	var zero T
	esz := int(unsafe.Sizeof(zero))
	n := min(len(src), len(dst)/esz)
	convertCopy(dst, AsBytes(src[:n]), esz, !isNative(order))
	return n
}

// getView is the inverse of putView.
func getView[T Primitive](dst []T, src []byte, order binary.ByteOrder) int {
	var zero T
	esz := int(unsafe.Sizeof(zero))
	n := min(len(dst), len(src)/esz)
	convertCopy(AsBytes(dst[:n]), src[:n*esz], esz, !isNative(order))
	return n
}
