package serialization

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// point travels as msgpack (its tagged field leaves it to msgpack): the
// tests of the msgpack path use it. codec_test.go has the codec's types.
type point struct {
	X, Y  float64
	Label string `msgpack:"Label"`
	Tags  []string
	Raw   []byte
	Next  *point
}

func TestObjects(t *testing.T) {
	pt := point{X: 1.5, Y: -2, Label: "p", Tags: []string{"a", "b"}, Raw: []byte{9, 8}, Next: &point{Label: "q"}}
	values := []any{
		nil, "", "hello", strings.Repeat("long ", 2000),
		true, uint8(200), int8(-5), int16(-300), uint16(60000), int32(-70000), uint32(4e9),
		int64(-1 << 40), uint64(1 << 63), int(-42), uint(42), float32(1.5), float64(-2.25),
		[]bool{true, false}, []byte("bytes"), []int8{-1}, []int16{-2, 3}, []uint16{4},
		[]int32{5, -6}, []uint32{7}, []int64{-8}, []uint64{9}, []int{-10, 11}, []uint{12},
		[]float32{1.25}, seq(5000), []float64{}, []int32(nil),
		[][]float64{{1, 2}, nil, {3}}, [][]int32{}, [][]byte(nil), [][]bool{{true}},
		[][]uint{{1, 2, 3}}, [][]int{{-1}, {}},
		map[string]any{"k": "v", "n": int64(3)}, []string{"x", "y"}, pt,
	}
	for _, o := range orders {
		t.Run(o.name, func(t *testing.T) {
			roundTrip(t, KindObject, []WriterOption{WithByteOrder(o.order)}, func(w *Writer) {
				for _, v := range values {
					must(t, w.WriteObject(v))
				}
			}, func(r *Reader) {
				for i, want := range values {
					var got any
					if want == nil {
						got = "not nil"
						must(t, r.ReadObject(&got))
						if got != nil {
							t.Fatalf("value %d: got %v, want nil", i, got)
						}
						continue
					}
					// Read into a pointer of the value's own type.
					p := reflect.New(reflect.TypeOf(want))
					must(t, r.ReadObject(p.Interface()))
					if !reflect.DeepEqual(p.Elem().Interface(), want) {
						t.Fatalf("value %d (%T): round trip differs", i, want)
					}
				}
			})
		})
	}
}

func TestObjectsIntoAny(t *testing.T) {
	roundTrip(t, KindObject, nil, func(w *Writer) {
		must(t, w.WriteObject([]float64{1, 2}))
		must(t, w.WriteObject([][]int16{{1}, {2, 3}}))
		must(t, w.WriteObject("s"))
		must(t, w.WriteObject(int32(7)))
		must(t, w.WriteObject(map[string]any{"a": "b"}))
		must(t, w.WriteObject(fmt.Stringer(nil)))
		must(t, w.WriteObject(stringer("x")))
	}, func(r *Reader) {
		var v any
		must(t, r.ReadObject(&v))
		eqDeep(t, v, []float64{1, 2})
		must(t, r.ReadObject(&v))
		eqDeep(t, v, [][]int16{{1}, {2, 3}})
		must(t, r.ReadObject(&v))
		eqDeep(t, v, "s")
		must(t, r.ReadObject(&v))
		eqDeep(t, v, int32(7))
		must(t, r.ReadObject(&v))
		eqDeep(t, v, map[string]any{"a": "b"})
		must(t, r.ReadObject(&v))
		eqDeep(t, v, nil)
		var s stringer
		must(t, r.ReadObject(&s))
		eqDeep(t, s, stringer("x"))
	})
}

type stringer string

func (s stringer) String() string { return string(s) }

func eqDeep(t *testing.T, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
}

func TestObjectNilness(t *testing.T) {
	roundTrip(t, KindObject, nil, func(w *Writer) {
		must(t, w.WriteObject([]int32(nil)))
		must(t, w.WriteObject([]int32{}))
		must(t, w.WriteObject([][]int32(nil)))
		must(t, w.WriteObject([][]int32{nil}))
	}, func(r *Reader) {
		a := []int32{1}
		must(t, r.ReadObject(&a))
		if a != nil {
			t.Fatal("nil slice read as non-nil")
		}
		must(t, r.ReadObject(&a))
		if a == nil || len(a) != 0 {
			t.Fatal("empty slice read as nil")
		}
		b := [][]int32{{1}}
		must(t, r.ReadObject(&b))
		if b != nil {
			t.Fatal("nil 2-D slice read as non-nil")
		}
		must(t, r.ReadObject(&b))
		if len(b) != 1 || len(b[0]) != 0 {
			t.Fatalf("got %#v", b)
		}
	})
}

func TestObjectReuseDoesNotOverrun(t *testing.T) {
	roundTrip(t, KindObject, nil, func(w *Writer) {
		must(t, w.WriteObject([]int64{1, 2}))
		must(t, w.WriteObject([]int64{3, 4, 5, 6}))
	}, func(r *Reader) {
		backing := []int64{0, 0, 0, 99, 99, 99}
		dst := backing[:3] // long enough for the first object
		must(t, r.ReadObject(&dst))
		eqDeep(t, dst, []int64{1, 2})
		if &dst[0] != &backing[0] {
			t.Fatal("a long enough destination was not reused")
		}
		must(t, r.ReadObject(&dst)) // too short now: must not write into backing[3:]
		eqDeep(t, dst, []int64{3, 4, 5, 6})
		eqDeep(t, backing[3:], []int64{99, 99, 99})
	})
}

func TestObjectMismatch(t *testing.T) {
	roundTrip(t, KindObject, []WriterOption{WithBulkThreshold(64)}, func(w *Writer) {
		must(t, w.WriteObject(fill[float64](100, 1)))
		must(t, w.WriteObject("str"))
		must(t, w.WriteObject([][]int16{{1, 2}, {3}}))
		must(t, w.WriteObject(int64(5)))
		must(t, w.WriteObject(point{Label: "x"}))
		must(t, w.WriteObject(uint8(1)))
	}, func(r *Reader) {
		var i32 []int32
		wantErr(t, r.ReadObject(&i32), ErrTypeMismatch, "[]float64", "*[]int32", "skipped")
		var n int
		wantErr(t, r.ReadObject(&n), ErrTypeMismatch, "string", "*int")
		wantErr(t, r.ReadObject(&n), ErrTypeMismatch, "[][]int16", "*int")
		wantErr(t, r.ReadObject(&n), ErrTypeMismatch, "int64", "*int")
		wantErr(t, r.ReadObject(&n), ErrTypeMismatch, "msgpack", "*int")
		wantErr(t, r.ReadObject(nil), ErrUnsupported, "non-nil pointer")
		wantErr(t, r.ReadObject(n), ErrUnsupported, "non-nil pointer")
		wantErr(t, r.ReadObject((*int)(nil)), ErrUnsupported, "non-nil pointer")
		var u uint8
		must(t, r.ReadObject(&u)) // still aligned after all the mismatches
		eq(t, u, 1)
	})
}

func TestMsgpackDoesNotAliasBuffers(t *testing.T) {
	sink := &memSink{}
	w := NewWriter(KindObject, sink)
	must(t, w.WriteObject(point{Raw: []byte("first"), Label: "one"}))
	must(t, w.WriteObject(point{Raw: []byte("other"), Label: "two"}))
	get[int64](t)(w.Finish())
	r := NewReader(KindObject, bytes.NewReader(sink.bytes()))
	must(t, r.Next())
	var a, b point
	must(t, r.ReadObject(&a))
	must(t, r.ReadObject(&b)) // reuses the Reader's msgpack buffer
	eq(t, string(a.Raw), "first")
	eq(t, a.Label, "one")
	eq(t, string(b.Raw), "other")
}

// seq returns 0, 1, ..., n-1 as float64s (no NaN, so DeepEqual works).
func seq(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(i) * 1.5
	}
	return s
}
