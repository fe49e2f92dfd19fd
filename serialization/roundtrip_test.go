package serialization

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

func TestRoundTripPrimitives(t *testing.T) {
	long := strings.Repeat("ibis-", 2000) // above the bulk threshold
	for _, o := range orders {
		for _, kind := range []Kind{KindData, KindObject} {
			t.Run(fmt.Sprintf("%s/%s", o.name, kind), func(t *testing.T) {
				nan := math.Float64frombits(0x7ff8_dead_beef_0001)
				nan32 := math.Float32frombits(0x7fc0_0123)
				roundTrip(t, kind, []WriterOption{WithByteOrder(o.order)}, func(w *Writer) {
					for i := range 3 { // several rounds interleave all types
						must(t, w.WriteBool(i%2 == 0))
						must(t, w.WriteByte(byte(200+i)))
						must(t, w.WriteInt8(math.MinInt8+int8(i)))
						must(t, w.WriteInt16(math.MinInt16+int16(i)))
						must(t, w.WriteUint16(math.MaxUint16-uint16(i)))
						must(t, w.WriteInt32(math.MinInt32+int32(i)))
						must(t, w.WriteUint32(math.MaxUint32-uint32(i)))
						must(t, w.WriteInt64(math.MinInt64+int64(i)))
						must(t, w.WriteUint64(math.MaxUint64-uint64(i)))
						must(t, w.WriteInt(-12345678*(i+1)))
						must(t, w.WriteUint(uint(987654321*(i+1))))
						must(t, w.WriteFloat32(float32(i)+0.25))
						must(t, w.WriteFloat64(-1e300*float64(i+1)))
						must(t, w.WriteString(""))
						must(t, w.WriteString("héllo, wörld ✓"))
						must(t, w.WriteString(long))
					}
					must(t, w.WriteFloat64(nan))
					must(t, w.WriteFloat32(nan32))
					must(t, w.WriteFloat64(math.Copysign(0, -1)))
				}, func(r *Reader) {
					for i := range 3 {
						eq(t, get[bool](t)(r.ReadBool()), i%2 == 0)
						eq(t, get[byte](t)(r.ReadByte()), byte(200+i))
						eq(t, get[int8](t)(r.ReadInt8()), math.MinInt8+int8(i))
						eq(t, get[int16](t)(r.ReadInt16()), math.MinInt16+int16(i))
						eq(t, get[uint16](t)(r.ReadUint16()), math.MaxUint16-uint16(i))
						eq(t, get[int32](t)(r.ReadInt32()), math.MinInt32+int32(i))
						eq(t, get[uint32](t)(r.ReadUint32()), math.MaxUint32-uint32(i))
						eq(t, get[int64](t)(r.ReadInt64()), math.MinInt64+int64(i))
						eq(t, get[uint64](t)(r.ReadUint64()), math.MaxUint64-uint64(i))
						eq(t, get[int](t)(r.ReadInt()), -12345678*(i+1))
						eq(t, get[uint](t)(r.ReadUint()), uint(987654321*(i+1)))
						eq(t, get[float32](t)(r.ReadFloat32()), float32(i)+0.25)
						eq(t, get[float64](t)(r.ReadFloat64()), -1e300*float64(i+1))
						eq(t, get[string](t)(r.ReadString()), "")
						eq(t, get[string](t)(r.ReadString()), "héllo, wörld ✓")
						eq(t, get[string](t)(r.ReadString()), long)
					}
					eq(t, math.Float64bits(get[float64](t)(r.ReadFloat64())), math.Float64bits(nan))
					eq(t, math.Float32bits(get[float32](t)(r.ReadFloat32())), math.Float32bits(nan32))
					eq(t, math.Float64bits(get[float64](t)(r.ReadFloat64())), math.Float64bits(math.Copysign(0, -1)))
				})
			})
		}
	}
}

// sameBits reports whether two slices have the same type, length and
// memory bits (NaNs compare equal, unlike reflect.DeepEqual).
func sameBits(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Type() != vb.Type() || va.Len() != vb.Len() {
		return false
	}
	n := va.Len() * int(va.Type().Elem().Size())
	if n == 0 {
		return true
	}
	return string(unsafe.Slice((*byte)(va.UnsafePointer()), n)) == string(unsafe.Slice((*byte)(vb.UnsafePointer()), n))
}

func eq[T comparable](t *testing.T, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// fill returns n deterministic values of T, distinct enough that a wrong
// offset or byte order shows.
func fill[T Primitive](n int, seed int) []T {
	s := make([]T, n)
	b := AsBytes(s)
	x := uint32(seed)*2654435761 + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	var zero T
	if _, ok := any(zero).(bool); ok {
		for i := range b {
			b[i] &= 1
		}
	}
	return s
}

// arrayCase writes and reads one slice type.
type arrayCase struct {
	name  string
	make  func(n, seed int) any
	empty func(n int) any
}

func newCase[T Primitive](name string) arrayCase {
	return arrayCase{
		name:  name,
		make:  func(n, seed int) any { return fill[T](n, seed) },
		empty: func(n int) any { return make([]T, n) },
	}
}

var arrayCases = []arrayCase{
	newCase[bool]("bool"), newCase[byte]("byte"), newCase[int8]("int8"),
	newCase[int16]("int16"), newCase[uint16]("uint16"), newCase[int32]("int32"),
	newCase[uint32]("uint32"), newCase[int64]("int64"), newCase[uint64]("uint64"),
	newCase[int]("int"), newCase[uint]("uint"), newCase[float32]("float32"),
	newCase[float64]("float64"),
}

func TestRoundTripArrays(t *testing.T) {
	thresholds := []struct {
		name string
		opt  WriterOption
	}{
		{"default", WithBulkThreshold(DefaultBulkThreshold)},
		{"nobulk", WithBulkThreshold(0)},
		{"allbulk", WithBulkThreshold(1)},
	}
	sizes := []int{0, 1, 3, 100, 1000, 20000}
	for _, o := range orders {
		for _, th := range thresholds {
			t.Run(o.name+"/"+th.name, func(t *testing.T) {
				opts := []WriterOption{WithByteOrder(o.order), th.opt, WithMaxPacketSize(4096)}
				var sent []any
				roundTrip(t, KindData, opts, func(w *Writer) {
					for ci, c := range arrayCases {
						for _, n := range sizes {
							s := c.make(n, ci*100+n)
							sent = append(sent, s)
							must(t, w.WriteArray(s))
							must(t, w.WriteInt32(int32(n))) // a marker between slices
						}
					}
				}, func(r *Reader) {
					i := 0
					for _, c := range arrayCases {
						for _, n := range sizes {
							got := c.empty(n)
							must(t, r.ReadArray(got))
							if !sameBits(got, sent[i]) {
								t.Fatalf("%s[%d]: round trip differs", c.name, n)
							}
							eq(t, get[int32](t)(r.ReadInt32()), int32(n))
							i++
						}
					}
				})
			})
		}
	}
}

func TestRoundTrip2D(t *testing.T) {
	for _, o := range orders {
		t.Run(o.name, func(t *testing.T) {
			opts := []WriterOption{WithByteOrder(o.order), WithBulkThreshold(256), WithMaxPacketSize(1024)}
			ragged := [][]float64{fill[float64](3, 1), nil, {}, fill[float64](500, 2), fill[float64](1, 3)}
			square := [][]int32{fill[int32](4, 4), fill[int32](4, 5), fill[int32](4, 6)}
			bools := [][]bool{fill[bool](300, 7), fill[bool](2, 8)}
			roundTrip(t, KindData, opts, func(w *Writer) {
				must(t, w.WriteArray(ragged))
				must(t, w.WriteArray(square))
				must(t, w.WriteArray([][]int16{}))
				must(t, w.WriteArray(bools))
				for ci, c := range arrayCases { // every 2-D type
					rows := reflect.MakeSlice(reflect.SliceOf(reflect.TypeOf(c.make(0, 0))), 3, 3)
					for i := range 3 {
						rows.Index(i).Set(reflect.ValueOf(c.make(i*50, ci+i)))
					}
					must(t, w.WriteArray(rows.Interface()))
				}
			}, func(r *Reader) {
				got := [][]float64{make([]float64, 3), nil, nil, make([]float64, 500), make([]float64, 1)}
				must(t, r.ReadArray(got))
				for i := range ragged {
					if !sameBits(got[i], ragged[i]) && !(len(got[i]) == 0 && len(ragged[i]) == 0) {
						t.Fatalf("ragged row %d differs", i)
					}
				}
				gs := [][]int32{make([]int32, 4), make([]int32, 4), make([]int32, 4)}
				must(t, r.ReadArray(gs))
				if !reflect.DeepEqual(gs, square) {
					t.Fatal("square differs")
				}
				must(t, r.ReadArray([][]int16{}))
				gb := [][]bool{make([]bool, 300), make([]bool, 2)}
				must(t, r.ReadArray(gb))
				if !reflect.DeepEqual(gb, bools) {
					t.Fatal("bools differ")
				}
				for ci, c := range arrayCases {
					rows := reflect.MakeSlice(reflect.SliceOf(reflect.TypeOf(c.make(0, 0))), 3, 3)
					for i := range 3 {
						rows.Index(i).Set(reflect.ValueOf(c.empty(i * 50)))
					}
					must(t, r.ReadArray(rows.Interface()))
					for i := range 3 {
						if !sameBits(rows.Index(i).Interface(), c.make(i*50, ci+i)) {
							t.Fatalf("[][]%s row %d differs", c.name, i)
						}
					}
				}
			})
		})
	}
}

func TestBulkPartialReads(t *testing.T) {
	for _, o := range orders {
		t.Run(o.name, func(t *testing.T) {
			data := fill[int32](10000, 1)
			f64 := fill[float64](3000, 2)
			roundTrip(t, KindData, []WriterOption{WithByteOrder(o.order)}, func(w *Writer) {
				must(t, w.WriteArray(data))
				must(t, w.WriteArray(f64))
			}, func(r *Reader) {
				// One element, then uneven chunks, then single elements.
				eq(t, get[int32](t)(r.ReadInt32()), data[0])
				a := make([]int32, 4999)
				must(t, r.ReadArray(a))
				b := make([]int32, 4990)
				must(t, r.ReadArray(b))
				for i := 5000 + 4990 - 1; i < 9999; i++ {
					eq(t, get[int32](t)(r.ReadInt32()), data[i+1])
				}
				got := append(append([]int32{data[0]}, a...), b...)
				if !reflect.DeepEqual(got, data[:len(got)]) {
					t.Fatal("partial bulk reads differ")
				}
				g := make([]float64, 3000)
				must(t, r.ReadArray(g[:1]))
				must(t, r.ReadArray(g[1:]))
				if !sameBits(g, f64) {
					t.Fatal("float64 bulk differs")
				}
			})
		})
	}
}

func TestBulkPartialReadsWithRowsAndSmallPackets(t *testing.T) {
	// Reads of uneven sizes share bulk bodies in every byte order, and a
	// 2-D slice whose rows are small and bulk alike reads back after them.
	for _, o := range orders {
		t.Run(o.name, func(t *testing.T) {
			src := make([]int16, 10007)
			for i := range src {
				src[i] = int16(i*7 + 1)
			}
			sink := &memSink{}
			w := NewWriter(KindData, sink, WithByteOrder(o.order), WithBulkThreshold(64), WithMaxPacketSize(256))
			must(t, w.WriteArray(src))
			must(t, w.WriteArray([][]int16{src[:3], nil, src[:5000], src[:1]}))
			must(t, w.WriteInt16(99))
			get[int64](t)(w.Finish())
			r := NewReader(KindData, bytes.NewReader(sink.bytes()), WithReaderMaxPacketSize(256))
			must(t, r.Next())
			got := make([]int16, 0, len(src))
			for _, k := range []int{1, 3, 999, 5000, 4004} {
				d := make([]int16, k)
				must(t, r.ReadArray(d))
				got = append(got, d...)
			}
			eqDeep(t, got, src)
			rows := [][]int16{make([]int16, 3), {}, make([]int16, 5000), make([]int16, 1)}
			must(t, r.ReadArray(rows))
			eqDeep(t, rows, [][]int16{src[:3], {}, src[:5000], src[:1]})
			eq(t, get[int16](t)(r.ReadInt16()), 99)
			must(t, r.Finish())
		})
	}
}

func TestBulkSplit(t *testing.T) {
	old := maxBulkElems
	maxBulkElems = 1000
	defer func() { maxBulkElems = old }()
	for _, o := range orders {
		t.Run(o.name, func(t *testing.T) {
			data := fill[uint16](2500, 3)
			sink := &memSink{}
			w := NewWriter(KindData, sink, WithByteOrder(o.order), WithBulkThreshold(64))
			must(t, w.WriteArray(data))
			n := get[int64](t)(w.Finish())
			// Three bulk packets (1000, 1000, 500 elements) and the End packet.
			if want := int64(3*HeaderSize + 2*2000 + 1000 + HeaderSize); n != want {
				t.Fatalf("message is %d bytes, want %d", n, want)
			}
			r := NewReader(KindData, strings.NewReader(string(sink.bytes())))
			must(t, r.Next())
			got := make([]uint16, 2500)
			must(t, r.ReadArray(got))
			if !reflect.DeepEqual(got, data) {
				t.Fatal("split bulk differs")
			}
			must(t, r.Finish())
		})
	}
}

func TestManyPacketsSmallValues(t *testing.T) {
	// Enough small values to fill many packets of the minimum size.
	roundTrip(t, KindData, []WriterOption{WithMaxPacketSize(64)}, func(w *Writer) {
		for i := range 1000 {
			must(t, w.WriteInt64(int64(i)))
			must(t, w.WriteInt8(int8(i)))
			must(t, w.WriteFloat32(float32(i)))
		}
	}, func(r *Reader) {
		for i := range 1000 {
			eq(t, get[int64](t)(r.ReadInt64()), int64(i))
			eq(t, get[int8](t)(r.ReadInt8()), int8(i))
			eq(t, get[float32](t)(r.ReadFloat32()), float32(i))
		}
	})
}
