package serialization

import (
	"encoding/binary"
	"math"

	"github.com/ibisgo/ibis/internal/byteview"
)

// Wire constants. See doc.go for the packet layout they describe.
const (
	// HeaderSize is the size in bytes of every packet header.
	HeaderSize = 32

	// Magic is the first byte of every packet header.
	Magic = 0xB1

	// FlagEnd marks the last packet of a message.
	FlagEnd = 0x01
	// FlagBulk marks a packet whose body is one large typed section.
	FlagBulk = 0x02
	// FlagClose marks a control packet: the sender disconnects cleanly.
	FlagClose = 0x04

	orderLittle = 0
	orderBig    = 1

	knownFlags = FlagEnd | FlagBulk | FlagClose

	// countsOffset is where the six element counts start in a header.
	countsOffset = 8
)

// Section indices, in wire order: largest element first so that every
// section of a body starts aligned to its element size.
const (
	secF64 = iota
	secI64
	secF32
	secI32
	secI16
	secI8
	numSections
)

// secSize is the element size in bytes of each section.
var secSize = [numSections]int{8, 8, 4, 4, 2, 1}

// secDesc names the values a section holds, for error messages.
var secDesc = [numSections]string{
	"float64",
	"64-bit integer (int64/uint64/int/uint)",
	"float32",
	"32-bit integer (int32/uint32)",
	"16-bit integer (int16/uint16)",
	"8-bit (int8/uint8/byte/bool/string byte)",
}

// maxBulkElems is the largest element count of one bulk packet; longer
// slices are split. A variable so tests can exercise splitting.
var maxBulkElems int64 = math.MaxUint32

// zeroPad supplies padding bytes for bodies that are not a multiple of 8.
var zeroPad [8]byte

// pad8 rounds n up to a multiple of 8.
func pad8(n int64) int64 { return (n + 7) &^ 7 }

// nativeLittle reports whether this machine stores integers little endian.
var nativeLittle = byteview.NativeLittle()

// NativeOrder returns the byte order of this machine as binary.LittleEndian
// or binary.BigEndian, the order a Writer uses unless told otherwise.
func NativeOrder() binary.ByteOrder {
	if nativeLittle {
		return binary.LittleEndian
	}
	return binary.BigEndian
}

// nativeOrderByte is the header byte-order value of this machine.
func nativeOrderByte() byte {
	if nativeLittle {
		return orderLittle
	}
	return orderBig
}

// isLittle probes an arbitrary binary.ByteOrder implementation.
func isLittle(o binary.ByteOrder) bool { return byteview.IsLittle(o) }

// orderOf returns the binary.ByteOrder named by a header byte-order value.
func orderOf(b byte) binary.ByteOrder {
	if b == orderBig {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// putHeader fills h with a packet header in the given byte order.
func putHeader(h []byte, orderByte, flags byte, counts *[numSections]uint32) {
	h[0] = Magic
	h[1] = orderByte
	h[2] = flags
	clear(h[3:countsOffset])
	o := orderOf(orderByte)
	for i := range numSections {
		o.PutUint32(h[countsOffset+4*i:], counts[i])
	}
}
