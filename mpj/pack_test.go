package mpj_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/mpj"
)

// TestPackRoundTrip: every element type, a 2-D slice and objects come back as packed, and
// PackSize is Pack's length.
func TestPackRoundTrip(t *testing.T) {
	bufs := []any{
		[]bool{true, false, true}, []byte{1, 255}, []int8{-128, 127}, []int16{-3, 300},
		[]uint16{65535}, []int32{-1 << 31, 7}, []uint32{1 << 31}, []int64{-1 << 63},
		[]uint64{1<<64 - 1}, []int{-5, 5}, []uint{9}, []float32{1.5, -0.25},
		[]float64{3.141592653589793, -0}, []float64{}, [][]int16{{1, 2}, {}, {3}},
		[]Body{{X: 1, Name: "a", Tags: []string{"x"}}, {Y: -2}}, []string{"", "zz"}, []any{1.5, "s"},
	}
	var packed []byte
	for _, b := range bufs {
		size, err := mpj.PackSize(b)
		if err != nil {
			t.Fatalf("PackSize(%T): %v", b, err)
		}
		before := len(packed)
		if packed, err = mpj.Pack(packed, b); err != nil {
			t.Fatalf("Pack(%T): %v", b, err)
		}
		if len(packed)-before != size {
			t.Errorf("%T: PackSize %d, Pack wrote %d", b, size, len(packed)-before)
		}
	}
	rest := packed
	for _, b := range bufs {
		dst := reflect.MakeSlice(reflect.TypeOf(b), reflect.ValueOf(b).Len(), reflect.ValueOf(b).Len())
		if rv := reflect.ValueOf(b); rv.Type().Elem().Kind() == reflect.Slice { // same shape
			for i := range rv.Len() {
				dst.Index(i).Set(reflect.MakeSlice(rv.Type().Elem(), rv.Index(i).Len(), rv.Index(i).Len()))
			}
		}
		var err error
		if rest, _, err = mpj.Unpack(rest, dst.Interface()); err != nil {
			t.Fatalf("Unpack(%T): %v", b, err)
		}
		if !reflect.DeepEqual(dst.Interface(), b) {
			t.Errorf("unpacked %v, packed %v", dst.Interface(), b)
		}
	}
	if len(rest) != 0 {
		t.Errorf("%d bytes left", len(rest))
	}
}

// TestUnpackRefusals: wrong type, too little room, garbage: errors, and src untouched.
func TestUnpackRefusals(t *testing.T) {
	p, _ := mpj.Pack(nil, []float64{1, 2, 3})
	objs, _ := mpj.Pack(nil, []Body{{Name: "x"}})
	for _, c := range []struct {
		name string
		src  []byte
		buf  any
		want error
	}{
		{"type", p, make([]int64, 3), ipl.ErrTypeMismatch},
		{"object type", objs, make([]string, 1), ipl.ErrTypeMismatch},
		{"room", p, make([]float64, 2), mpj.ErrTruncated},
		{"room 2-D", p, [][]float64{{0}, {0}}, mpj.ErrTruncated},
		{"empty", nil, make([]byte, 1), mpj.ErrMalformed},
		{"cut short", p[:len(p)-1], make([]float64, 3), mpj.ErrMalformed},
		{"unknown type", []byte{200, 0}, make([]byte, 1), mpj.ErrMalformed},
		{"huge count", []byte{byte(mpj.Float64), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, make([]float64, 1), mpj.ErrMalformed},
		{"bad bool", []byte{byte(mpj.Bool), 1, 2}, make([]bool, 1), mpj.ErrMalformed},
		{"not a buffer", p, 42, ipl.ErrUnsupported},
	} {
		rest, n, err := mpj.Unpack(c.src, c.buf)
		if !errors.Is(err, c.want) || n != 0 || len(rest) != len(c.src) {
			t.Errorf("%s: %d elements, %d bytes left, %v; want %v", c.name, n, len(rest), err, c.want)
		}
	}
}

// FuzzUnpack: no input makes Unpack panic, or report more elements than the buffer holds.
func FuzzUnpack(f *testing.F) {
	for _, b := range []any{[]float64{1, 2}, [][]int32{{1}, {2, 3}}, []Body{{Name: "n"}}, []bool{true}} {
		p, err := mpj.Pack(nil, b)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, buf := range []any{make([]float64, 4), [][]int32{make([]int32, 2), make([]int32, 2)}, make([]Body, 2), make([]bool, 3)} {
			rest, n, err := mpj.Unpack(src, buf)
			if err == nil && (n > 4 || len(rest) > len(src)) {
				t.Fatalf("%T: %d elements, %d of %d bytes left", buf, n, len(rest), len(src))
			}
		}
	})
}
