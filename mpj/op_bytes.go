package mpj

import (
	"encoding/binary"
	"unsafe"
)

// bytewise applies Sum, BAnd, BOr or BXor to byte-sized elements eight at a time, in
// 64-bit words (the results are exactly those of the element loop: a sum wraps around in
// each byte, as uint8 and int8 arithmetic do), and reports whether it did. Reducing bytes
// is what the collectives benchmark does (MPI_SUM on MPI_UNSIGNED_CHAR), and the element
// loop costs about a nanosecond a byte, as much as the transfer.
func bytewise(o Op, d, a, b []byte) bool {
	const high = 0x8080808080808080
	switch o {
	case Sum, BAnd, BOr, BXor:
	default:
		return false
	}
	le := binary.LittleEndian
	n := len(d) &^ 7
	a, b = a[:len(d)], b[:len(d)]
	switch o { // one loop per operator: a call per word would cost what it saves
	case Sum:
		// Add the low seven bits of every byte (no carry can leave a byte), then put back
		// each byte's top bit: the xor of the operands' top bits.
		if aligned8(d) && aligned8(a) && aligned8(b) {
			sumWords(d[:n], a[:n], b[:n])
		} else {
			for i := 0; i < n; i += 8 {
				x, y := le.Uint64(a[i:]), le.Uint64(b[i:])
				le.PutUint64(d[i:], ((x&^high)+(y&^high))^((x^y)&high))
			}
		}
		for i := n; i < len(d); i++ {
			d[i] = a[i] + b[i]
		}
	case BAnd:
		for i := 0; i < n; i += 8 {
			le.PutUint64(d[i:], le.Uint64(a[i:])&le.Uint64(b[i:]))
		}
		for i := n; i < len(d); i++ {
			d[i] = a[i] & b[i]
		}
	case BOr:
		for i := 0; i < n; i += 8 {
			le.PutUint64(d[i:], le.Uint64(a[i:])|le.Uint64(b[i:]))
		}
		for i := n; i < len(d); i++ {
			d[i] = a[i] | b[i]
		}
	case BXor:
		for i := 0; i < n; i += 8 {
			le.PutUint64(d[i:], le.Uint64(a[i:])^le.Uint64(b[i:]))
		}
		for i := n; i < len(d); i++ {
			d[i] = a[i] ^ b[i]
		}
	}
	return true
}

// int8Bytes views an []int8 as the bytes it is (the same bits: int8 sums and bitwise
// operations are those of uint8).
func int8Bytes(s []int8) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s))
}

// aligned8 reports whether s starts on an 8-byte boundary, so that it can be read as
// 64-bit words (a misaligned word pointer is an error under the race detector's checks).
func aligned8(s []byte) bool { return uintptr(unsafe.Pointer(unsafe.SliceData(s)))%8 == 0 }

// sumWords is Sum on bytes for aligned slices of whole 64-bit words, four words a turn: the
// low seven bits of every byte are added (no carry can leave a byte), then each
// byte's top bit is put back as the xor of the operands' top bits. The words are
// read and written in memory order; the byte sums do not depend on it.
func sumWords(d, a, b []byte) {
	const high = 0x8080808080808080
	w := len(d) / 8
	dw := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(d))), w)
	aw := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(a))), w)
	bw := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), w)
	aw, bw = aw[:len(dw)], bw[:len(dw)]
	i := 0
	for ; i+4 <= len(dw); i += 4 {
		x0, y0 := aw[i], bw[i]
		x1, y1 := aw[i+1], bw[i+1]
		x2, y2 := aw[i+2], bw[i+2]
		x3, y3 := aw[i+3], bw[i+3]
		dw[i] = ((x0 &^ high) + (y0 &^ high)) ^ ((x0 ^ y0) & high)
		dw[i+1] = ((x1 &^ high) + (y1 &^ high)) ^ ((x1 ^ y1) & high)
		dw[i+2] = ((x2 &^ high) + (y2 &^ high)) ^ ((x2 ^ y2) & high)
		dw[i+3] = ((x3 &^ high) + (y3 &^ high)) ^ ((x3 ^ y3) & high)
	}
	for ; i < len(dw); i++ {
		x, y := aw[i], bw[i]
		dw[i] = ((x &^ high) + (y &^ high)) ^ ((x ^ y) & high)
	}
}
