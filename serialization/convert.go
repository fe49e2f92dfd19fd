package serialization

import (
	"encoding/binary"
	"unsafe"

	"github.com/ibisgo/ibis/internal/byteview"
)

// Primitive is the set of element types whose slices this package can view
// as bytes and send without conversion.
type Primitive = byteview.Primitive

// AsBytes returns the memory of s as a byte slice, in the machine's native
// byte order, without copying: writes through either slice are visible in
// the other. It is how a Writer sends a large slice straight from the
// caller's memory and how a Reader receives straight into it.
func AsBytes[T Primitive](s []T) []byte { return byteview.AsBytes(s) }

// stringBytes views the bytes of s without copying. The result must only be
// read.
func stringBytes(s string) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// isNative reports whether order is the machine's byte order.
func isNative(order binary.ByteOrder) bool { return byteview.IsNative(order) }

// swapCopy copies src to dst reversing the bytes of every esz-byte element
// (byteview.SwapCopy).
func swapCopy(dst, src []byte, esz int) { byteview.SwapCopy(dst, src, esz) }

// convertCopy copies src to dst, swapping element bytes when swap is set
// (byteview.ConvertCopy).
func convertCopy(dst, src []byte, esz int, swap bool) { byteview.ConvertCopy(dst, src, esz, swap) }
