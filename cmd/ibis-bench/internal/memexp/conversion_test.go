package memexp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/ibisgo/ibis/internal/byteview"
	"github.com/ibisgo/ibis/serialization"
)

func TestConversionAllCases(t *testing.T) {
	// Every element type, a small slice, one that is not a whole number of
	// int64s, and one above the bulk threshold, every method and order: each
	// case checks its own round trip before and after its timings, so the
	// run only succeeds if all of them convert correctly.
	p := ConversionParams{
		Elems: []Elem{ElemInt16, ElemInt32, ElemInt64, ElemFloat32, ElemFloat64},
		Sizes: []int{64, 100, 8 << 10},
	}
	var progress int
	res, err := Conversion(t.Context(), p, append(fast, WithProgress(func(string, ...any) { progress++ }))...)
	if err != nil {
		t.Fatal(err)
	}
	if want := 5 * 3 * 3 * 2 * 2; len(res.Cases) != want || progress != 5*3 {
		t.Fatalf("%d cases, %d progress calls; want %d and one per element type and size", len(res.Cases), progress, want)
	}
	for _, c := range res.Cases {
		if c.MBps <= 0 || c.Reps != 3 || c.Bytes != c.Elements*c.Elem.Size() {
			t.Errorf("%v %d %v %v %v: %+v", c.Elem, c.Bytes, c.Method, c.Order, c.Dir, c)
		}
	}
	if c, ok := res.Find(ElemInt64, 96, MethodView, OrderSwapped, Read); !ok || c.Elements != 12 {
		t.Fatalf("100 bytes of int64 should be 12 elements (96 bytes): %+v, %v", c, ok)
	}
	if _, ok := res.Find(ElemInt64, 100, MethodView, OrderSwapped, Read); ok {
		t.Fatal("found a case of 100 bytes of int64")
	}
	if len(res.Params.Methods) != 3 || len(res.Params.Orders) != 2 || res.NativeOrder != serialization.NativeOrder().String() {
		t.Fatalf("defaults not filled in: %+v", res)
	}
}

func TestConversionCopySink(t *testing.T) {
	res, err := Conversion(t.Context(), ConversionParams{
		Elems: []Elem{ElemFloat64}, Sizes: []int{16 << 10}, Methods: []Method{MethodStream}, CopySink: true,
	}, fast...)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cases) != 4 {
		t.Fatalf("%d cases, want 4", len(res.Cases))
	}
}

func TestConversionDefaults(t *testing.T) {
	p, err := ConversionParams{}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(p.Elems, p.Sizes, p.Methods, p.Orders) != "[int32 int64 float64] [64 8192 102400] [loop view stream] [native swapped]" {
		t.Fatalf("defaults %v %v %v %v", p.Elems, p.Sizes, p.Methods, p.Orders)
	}
}

func TestConversionInvalid(t *testing.T) {
	for _, p := range []ConversionParams{
		{Elems: []Elem{ElemByte}},
		{Elems: []Elem{Elem(42)}},
		{Elems: []Elem{ElemInt64}, Sizes: []int{7}},
		{Sizes: []int{0}},
		{Sizes: []int{MaxBytes + 1}},
		{Methods: []Method{Method(-1)}},
		{Orders: []Order{Order(3)}},
	} {
		if _, err := Conversion(t.Context(), p, fast...); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", p, err)
		}
	}
	if _, err := Conversion(t.Context(), ConversionParams{}, WithRepetitions(-1)); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative repetitions: %v, want ErrInvalid", err)
	}
}

func TestConversionCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Conversion(ctx, ConversionParams{Sizes: []int{64}}, fast...); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v, want context.Canceled", err)
	}
}

// The checks have teeth: a conversion that gets the bytes wrong fails its
// case with ErrMismatch instead of being timed.
func TestConversionChecksCatchErrors(t *testing.T) {
	cfg, err := newConfig(fast)
	if err != nil {
		t.Fatal(err)
	}
	src := makeData[int32](16, 1)
	swapped := OrderSwapped.ByteOrder()
	noSwap := func(dst []byte, s []int32, _ binary.ByteOrder) int { // ignores the order
		return byteview.Put[int32](dst, s, serialization.NativeOrder())
	}
	short := func(dst []byte, s []int32, o binary.ByteOrder) int { // converts one element too few
		return putInt32sLoop(dst, s[:len(s)-1], o)
	}
	lastWrong := func(dst []int32, b []byte, o binary.ByteOrder) int {
		n := getInt32sLoop(dst, b, o)
		dst[n-1]++
		return n
	}
	for name, b := range map[string]*bench{
		"put ignores order": convWrite("no swap", src, swapped, noSwap),
		"put short":         convWrite("short", src, swapped, short),
		"get wrong value":   convRead("wrong", src, swapped, lastWrong),
	} {
		if _, err := measure(t.Context(), cfg, b); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: %v, want ErrMismatch", name, err)
		}
	}
	// The correct functions pass.
	for _, b := range []*bench{
		convWrite("loop", src, swapped, putInt32sLoop),
		convRead("view", src, swapped, byteview.Get[int32]),
	} {
		if _, err := measure(t.Context(), cfg, b); err != nil {
			t.Errorf("%s: %v", b.name, err)
		}
	}
}
