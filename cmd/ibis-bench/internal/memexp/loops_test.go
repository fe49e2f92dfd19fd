package memexp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/ibisgo/ibis/internal/byteview"
)

// checkConversion requires the loop and the byte view to write the same bytes for src
// in order o, read them back to src's bits, and convert only what fits a short buffer.
func checkConversion[T int16 | int32 | int64 | float32 | float64](t *testing.T, o binary.ByteOrder, src []T,
	putLoop func([]byte, []T, binary.ByteOrder) int, getLoop func([]T, []byte, binary.ByteOrder) int) {
	t.Helper()
	size := int(binary.Size(src[0]))
	loop, view := make([]byte, size*len(src)), make([]byte, size*len(src))
	if n, m := putLoop(loop, src, o), byteview.Put(view, src, o); n != len(src) || m != len(src) || !bytes.Equal(loop, view) {
		t.Fatalf("%T %v: loop and view differ (%d, %d elements)", src[0], o, n, m)
	}
	a, b := make([]T, len(src)), make([]T, len(src))
	getLoop(a, loop, o)
	byteview.Get(b, view, o)
	if !bytes.Equal(byteview.AsBytes(a), byteview.AsBytes(src)) || !bytes.Equal(byteview.AsBytes(b), byteview.AsBytes(src)) {
		t.Fatalf("%T %v: round trip", src[0], o)
	}
	if n, m := putLoop(make([]byte, 2*size+1), src, o), byteview.Put(make([]byte, 2*size+1), src, o); n != 2 || m != 2 {
		t.Fatalf("%T: a short buffer took %d and %d elements, want 2", src[0], n, m)
	}
}

func fillWith[T int16 | int32 | int64 | float32 | float64](n int, f func(int) T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = f(i)
	}
	return s
}

// TestConversions checks the per-element loops and the byte views (the two ways the
// conversion experiment compares) against each other, in both byte orders.
func TestConversions(t *testing.T) {
	const n = 37
	for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		checkConversion(t, o, fillWith(n, func(i int) int16 { return int16(i*977 - 3000) }), putInt16sLoop, getInt16sLoop)
		checkConversion(t, o, fillWith(n, func(i int) int32 { return int32(i*123457 - 9e6) }), putInt32sLoop, getInt32sLoop)
		checkConversion(t, o, fillWith(n, func(i int) int64 { return int64(i)*0x0102030405 - 1 }), putInt64sLoop, getInt64sLoop)
		checkConversion(t, o, fillWith(n, func(i int) float32 { return float32(i) * 1.25e-3 }), putFloat32sLoop, getFloat32sLoop)
		checkConversion(t, o, fillWith(n, func(i int) float64 { return math.Sqrt(float64(i)) - 2 }), putFloat64sLoop, getFloat64sLoop)
	}
}

// BenchmarkConvert compares the per-element loop with the byte view (go test -bench
// Convert ./cmd/ibis-bench/internal/memexp/), in the machine's order and the other.
func BenchmarkConvert(b *testing.B) {
	orders := []struct {
		name  string
		order binary.ByteOrder
	}{{"native", binary.NativeEndian}, {"swapped", binary.BigEndian}}
	if !byteview.NativeLittle() {
		orders[1].order = binary.LittleEndian
	}
	for _, n := range []int{1 << 10, 1 << 20} {
		buf := make([]byte, 8*n)
		f64, i32 := make([]float64, n), make([]int32, n)
		for _, o := range orders {
			for _, c := range []struct {
				name       string
				bytes      int
				loop, view func()
			}{
				{"float64", 8 * n, func() { putFloat64sLoop(buf, f64, o.order) }, func() { byteview.Put(buf, f64, o.order) }},
				{"int32", 4 * n, func() { putInt32sLoop(buf, i32, o.order) }, func() { byteview.Put(buf, i32, o.order) }},
				{"get-float64", 8 * n, func() { getFloat64sLoop(f64, buf, o.order) }, func() { byteview.Get(f64, buf, o.order) }},
			} {
				for _, way := range []struct {
					name string
					f    func()
				}{{"loop", c.loop}, {"view", c.view}} {
					b.Run(fmt.Sprintf("%s/%s/%s/%d", c.name, way.name, o.name, n), func(b *testing.B) {
						b.SetBytes(int64(c.bytes))
						for b.Loop() {
							way.f()
						}
					})
				}
			}
		}
	}
}
