package serialization

import (
	"encoding/binary"
	"math"
)

// The exported conversions below let a benchmark compare the three ways of
// turning typed slices into bytes: a per-element loop through a
// binary.ByteOrder (the simple conversion of Ibis, and the baseline), a byte
// view (PutXxxView/GetXxxView: one memory copy, or a word-wise byte swap when
// the order is not native), and no conversion at all (AsBytes, which is what
// a Writer does for bulk slices). Each converts min(len(src), capacity of
// dst) elements and returns that number; none panics on short buffers.

// PutInt16sLoop encodes src into dst one element at a time.
func PutInt16sLoop(dst []byte, src []int16, order binary.ByteOrder) int {
	n := min(len(src), len(dst)/2)
	for i, v := range src[:n] {
		order.PutUint16(dst[2*i:], uint16(v))
	}
	return n
}

// GetInt16sLoop decodes src into dst one element at a time.
func GetInt16sLoop(dst []int16, src []byte, order binary.ByteOrder) int {
	n := min(len(dst), len(src)/2)
	for i := range dst[:n] {
		dst[i] = int16(order.Uint16(src[2*i:]))
	}
	return n
}

// PutInt32sLoop encodes src into dst one element at a time.
func PutInt32sLoop(dst []byte, src []int32, order binary.ByteOrder) int {
	n := min(len(src), len(dst)/4)
	for i, v := range src[:n] {
		order.PutUint32(dst[4*i:], uint32(v))
	}
	return n
}

// GetInt32sLoop decodes src into dst one element at a time.
func GetInt32sLoop(dst []int32, src []byte, order binary.ByteOrder) int {
	n := min(len(dst), len(src)/4)
	for i := range dst[:n] {
		dst[i] = int32(order.Uint32(src[4*i:]))
	}
	return n
}

// PutInt64sLoop encodes src into dst one element at a time.
func PutInt64sLoop(dst []byte, src []int64, order binary.ByteOrder) int {
	n := min(len(src), len(dst)/8)
	for i, v := range src[:n] {
		order.PutUint64(dst[8*i:], uint64(v))
	}
	return n
}

// GetInt64sLoop decodes src into dst one element at a time.
func GetInt64sLoop(dst []int64, src []byte, order binary.ByteOrder) int {
	n := min(len(dst), len(src)/8)
	for i := range dst[:n] {
		dst[i] = int64(order.Uint64(src[8*i:]))
	}
	return n
}

// PutFloat32sLoop encodes src into dst one element at a time.
func PutFloat32sLoop(dst []byte, src []float32, order binary.ByteOrder) int {
	n := min(len(src), len(dst)/4)
	for i, v := range src[:n] {
		order.PutUint32(dst[4*i:], math.Float32bits(v))
	}
	return n
}

// GetFloat32sLoop decodes src into dst one element at a time.
func GetFloat32sLoop(dst []float32, src []byte, order binary.ByteOrder) int {
	n := min(len(dst), len(src)/4)
	for i := range dst[:n] {
		dst[i] = math.Float32frombits(order.Uint32(src[4*i:]))
	}
	return n
}

// PutFloat64sLoop encodes src into dst one element at a time.
func PutFloat64sLoop(dst []byte, src []float64, order binary.ByteOrder) int {
	n := min(len(src), len(dst)/8)
	for i, v := range src[:n] {
		order.PutUint64(dst[8*i:], math.Float64bits(v))
	}
	return n
}

// GetFloat64sLoop decodes src into dst one element at a time.
func GetFloat64sLoop(dst []float64, src []byte, order binary.ByteOrder) int {
	n := min(len(dst), len(src)/8)
	for i := range dst[:n] {
		dst[i] = math.Float64frombits(order.Uint64(src[8*i:]))
	}
	return n
}

// PutInt16sView encodes src into dst through a byte view (what a Writer does
// for slices below the bulk threshold).
func PutInt16sView(dst []byte, src []int16, order binary.ByteOrder) int {
	return putView(dst, src, order)
}

// GetInt16sView decodes src into dst through a byte view (what a Reader does
// for data in small packets).
func GetInt16sView(dst []int16, src []byte, order binary.ByteOrder) int {
	return getView(dst, src, order)
}

// PutInt32sView encodes src into dst through a byte view (what a Writer does
// for slices below the bulk threshold).
func PutInt32sView(dst []byte, src []int32, order binary.ByteOrder) int {
	return putView(dst, src, order)
}

// GetInt32sView decodes src into dst through a byte view (what a Reader does
// for data in small packets).
func GetInt32sView(dst []int32, src []byte, order binary.ByteOrder) int {
	return getView(dst, src, order)
}

// PutInt64sView encodes src into dst through a byte view (what a Writer does
// for slices below the bulk threshold).
func PutInt64sView(dst []byte, src []int64, order binary.ByteOrder) int {
	return putView(dst, src, order)
}

// GetInt64sView decodes src into dst through a byte view (what a Reader does
// for data in small packets).
func GetInt64sView(dst []int64, src []byte, order binary.ByteOrder) int {
	return getView(dst, src, order)
}

// PutFloat32sView encodes src into dst through a byte view (what a Writer
// does for slices below the bulk threshold).
func PutFloat32sView(dst []byte, src []float32, order binary.ByteOrder) int {
	return putView(dst, src, order)
}

// GetFloat32sView decodes src into dst through a byte view (what a Reader
// does for data in small packets).
func GetFloat32sView(dst []float32, src []byte, order binary.ByteOrder) int {
	return getView(dst, src, order)
}

// PutFloat64sView encodes src into dst through a byte view (what a Writer
// does for slices below the bulk threshold).
func PutFloat64sView(dst []byte, src []float64, order binary.ByteOrder) int {
	return putView(dst, src, order)
}

// GetFloat64sView decodes src into dst through a byte view (what a Reader
// does for data in small packets).
func GetFloat64sView(dst []float64, src []byte, order binary.ByteOrder) int {
	return getView(dst, src, order)
}
