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
		for i := 0; i < n; i += 8 {
			x, y := le.Uint64(a[i:]), le.Uint64(b[i:])
			le.PutUint64(d[i:], ((x&^high)+(y&^high))^((x^y)&high))
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
