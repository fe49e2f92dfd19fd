package mpj

import (
	"fmt"

	"github.com/ibisgo/ibis/ipl"
)

// Datatype names the element type of a message buffer. Buffers are Go slices, so the
// type is taken from the slice itself; it travels in every message header so that a
// receive into a slice of another element type is an error, not a reinterpretation of
// bytes.
type Datatype uint8

// The element types mpj carries: every Go primitive type.
const (
	Bool Datatype = iota + 1
	Byte
	Int8
	Int16
	Uint16
	Int32
	Uint32
	Int64
	Uint64
	Int
	Uint
	Float32
	Float64
	// Object is a slice of any other element type ([]MyStruct, []string, []any, ...),
	// whose values travel encoded (point-to-point only; see the package doc).
	Object
	numDatatypes
)

var datatypeNames = [...]string{"invalid", "bool", "byte", "int8", "int16", "uint16", "int32",
	"uint32", "int64", "uint64", "int", "uint", "float32", "float64", "object"}

// String returns the Go name of the element type ("float64", ...).
func (d Datatype) String() string {
	if d >= numDatatypes {
		return fmt.Sprintf("Datatype(%d)", uint8(d))
	}
	return datatypeNames[d]
}

// size returns the size of one element in bytes (int and uint as 8, as on the
// 64-bit platforms Ibis runs on).
func (d Datatype) size() int {
	switch d {
	case Bool, Byte, Int8:
		return 1
	case Int16, Uint16:
		return 2
	case Int32, Uint32, Float32:
		return 4
	}
	return 8
}

// bufInfo returns the element type and length of a buffer, or an error naming the
// unsupported Go type. A nil buffer is an empty []byte, so that messages without
// payload (barriers, zero-length sends) need no buffer.
func bufInfo(buf any) (Datatype, int, error) {
	switch b := buf.(type) {
	case nil:
		return Byte, 0, nil
	case []bool:
		return Bool, len(b), nil
	case []byte:
		return Byte, len(b), nil
	case []int8:
		return Int8, len(b), nil
	case []int16:
		return Int16, len(b), nil
	case []uint16:
		return Uint16, len(b), nil
	case []int32:
		return Int32, len(b), nil
	case []uint32:
		return Uint32, len(b), nil
	case []int64:
		return Int64, len(b), nil
	case []uint64:
		return Uint64, len(b), nil
	case []int:
		return Int, len(b), nil
	case []uint:
		return Uint, len(b), nil
	case []float32:
		return Float32, len(b), nil
	case []float64:
		return Float64, len(b), nil
	}
	return 0, 0, fmt.Errorf("%w: mpj: a collective's buffer must be a slice of a primitive type ([]float64, []int32, []byte, ...), not %T (2-D slices and objects go point-to-point)",
		ipl.ErrUnsupported, buf)
}

// makeBuf returns a new slice of n elements of type d, to hold a message that arrived
// before its receive.
func makeBuf(d Datatype, n int) any {
	switch d {
	case Bool:
		return make([]bool, n)
	case Byte:
		return make([]byte, n)
	case Int8:
		return make([]int8, n)
	case Int16:
		return make([]int16, n)
	case Uint16:
		return make([]uint16, n)
	case Int32:
		return make([]int32, n)
	case Uint32:
		return make([]uint32, n)
	case Int64:
		return make([]int64, n)
	case Uint64:
		return make([]uint64, n)
	case Int:
		return make([]int, n)
	case Uint:
		return make([]uint, n)
	case Float32:
		return make([]float32, n)
	case Float64:
		return make([]float64, n)
	}
	return nil
}

// sliceBuf returns buf[lo:hi] of a buffer bufInfo accepted.
func sliceBuf(buf any, lo, hi int) any {
	switch b := buf.(type) {
	case nil:
		return []byte(nil)
	case []bool:
		return b[lo:hi]
	case []byte:
		return b[lo:hi]
	case []int8:
		return b[lo:hi]
	case []int16:
		return b[lo:hi]
	case []uint16:
		return b[lo:hi]
	case []int32:
		return b[lo:hi]
	case []uint32:
		return b[lo:hi]
	case []int64:
		return b[lo:hi]
	case []uint64:
		return b[lo:hi]
	case []int:
		return b[lo:hi]
	case []uint:
		return b[lo:hi]
	case []float32:
		return b[lo:hi]
	case []float64:
		return b[lo:hi]
	}
	panic(fmt.Sprintf("mpj: sliceBuf of unchecked %T", buf))
}

// copyBuf copies src into dst, both buffers of the same element type; it returns the
// number of elements copied.
func copyBuf(dst, src any) int {
	switch d := dst.(type) {
	case nil:
		return 0
	case []bool:
		return copy(d, src.([]bool))
	case []byte:
		if src == nil {
			return 0
		}
		return copy(d, src.([]byte))
	case []int8:
		return copy(d, src.([]int8))
	case []int16:
		return copy(d, src.([]int16))
	case []uint16:
		return copy(d, src.([]uint16))
	case []int32:
		return copy(d, src.([]int32))
	case []uint32:
		return copy(d, src.([]uint32))
	case []int64:
		return copy(d, src.([]int64))
	case []uint64:
		return copy(d, src.([]uint64))
	case []int:
		return copy(d, src.([]int))
	case []uint:
		return copy(d, src.([]uint))
	case []float32:
		return copy(d, src.([]float32))
	case []float64:
		return copy(d, src.([]float64))
	}
	panic(fmt.Sprintf("mpj: copyBuf of unchecked %T", dst))
}

// cloneBuf returns a copy of buf with its own memory.
func cloneBuf(buf any) any {
	d, n, _ := bufInfo(buf)
	c := makeBuf(d, n)
	copyBuf(c, buf)
	return c
}
