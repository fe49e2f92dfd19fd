package memexp

import (
	"encoding/binary"
	"math"
)

// The per-element conversions: the simple conversion of Ibis through a
// binary.ByteOrder, the baseline the experiment compares the byte views of package
// serialization (internal/byteview) with. Each converts min(len(src), capacity of dst)
// elements and returns that number; none panics on short buffers.

// putInt16sLoop encodes src into dst one element at a time.
func putInt16sLoop(dst []byte, src []int16, order binary.ByteOrder) int {
	n := min(len(src), len(dst)/2)
	for i, v := range src[:n] {
		order.PutUint16(dst[2*i:], uint16(v))
	}
	return n
}

// getInt16sLoop decodes src into dst one element at a time.
func getInt16sLoop(dst []int16, src []byte, order binary.ByteOrder) int {
	n := min(len(dst), len(src)/2)
	for i := range dst[:n] {
		dst[i] = int16(order.Uint16(src[2*i:]))
	}
	return n
}

// putInt32sLoop encodes src into dst one element at a time.
func putInt32sLoop(dst []byte, src []int32, order binary.ByteOrder) int {
	n := min(len(src), len(dst)/4)
	for i, v := range src[:n] {
		order.PutUint32(dst[4*i:], uint32(v))
	}
	return n
}

// getInt32sLoop decodes src into dst one element at a time.
func getInt32sLoop(dst []int32, src []byte, order binary.ByteOrder) int {
	n := min(len(dst), len(src)/4)
	for i := range dst[:n] {
		dst[i] = int32(order.Uint32(src[4*i:]))
	}
	return n
}

// putInt64sLoop encodes src into dst one element at a time.
func putInt64sLoop(dst []byte, src []int64, order binary.ByteOrder) int {
	n := min(len(src), len(dst)/8)
	for i, v := range src[:n] {
		order.PutUint64(dst[8*i:], uint64(v))
	}
	return n
}

// getInt64sLoop decodes src into dst one element at a time.
func getInt64sLoop(dst []int64, src []byte, order binary.ByteOrder) int {
	n := min(len(dst), len(src)/8)
	for i := range dst[:n] {
		dst[i] = int64(order.Uint64(src[8*i:]))
	}
	return n
}

// putFloat32sLoop encodes src into dst one element at a time.
func putFloat32sLoop(dst []byte, src []float32, order binary.ByteOrder) int {
	n := min(len(src), len(dst)/4)
	for i, v := range src[:n] {
		order.PutUint32(dst[4*i:], math.Float32bits(v))
	}
	return n
}

// getFloat32sLoop decodes src into dst one element at a time.
func getFloat32sLoop(dst []float32, src []byte, order binary.ByteOrder) int {
	n := min(len(dst), len(src)/4)
	for i := range dst[:n] {
		dst[i] = math.Float32frombits(order.Uint32(src[4*i:]))
	}
	return n
}

// putFloat64sLoop encodes src into dst one element at a time.
func putFloat64sLoop(dst []byte, src []float64, order binary.ByteOrder) int {
	n := min(len(src), len(dst)/8)
	for i, v := range src[:n] {
		order.PutUint64(dst[8*i:], math.Float64bits(v))
	}
	return n
}

// getFloat64sLoop decodes src into dst one element at a time.
func getFloat64sLoop(dst []float64, src []byte, order binary.ByteOrder) int {
	n := min(len(dst), len(src)/8)
	for i := range dst[:n] {
		dst[i] = math.Float64frombits(order.Uint64(src[8*i:]))
	}
	return n
}
