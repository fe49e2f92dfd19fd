package memexp

import (
	"errors"
	"slices"
	"testing"

	"github.com/ibisgo/ibis/serialization"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int{
		"64": 64, "64B": 64, " 8K": 8192, "8KB": 8192, "8kib": 8192, "100K": 102400, "1M": 1 << 20, "2MiB": 2 << 20, "0": 0,
	} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "K", "-1", "1.5K", "12Q", "1000M", "9999999999999999999"} {
		if _, err := ParseSize(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseSize(%q): %v, want ErrInvalid", in, err)
		}
	}
	for _, n := range []int{1, 64, 100, 8192, 102400, 1 << 20, 1000} {
		if got, err := ParseSize(FormatSize(n)); err != nil || got != n {
			t.Errorf("FormatSize(%d) = %q does not parse back: %d, %v", n, FormatSize(n), got, err)
		}
	}
}

func TestParseLists(t *testing.T) {
	if s, err := ParseSizes("64,8K,100K"); err != nil || !slices.Equal(s, []int{64, 8192, 102400}) {
		t.Errorf("ParseSizes: %v, %v", s, err)
	}
	if e, err := ParseElems("int32, INT64,float64,uint8"); err != nil || !slices.Equal(e, []Elem{ElemInt32, ElemInt64, ElemFloat64, ElemByte}) {
		t.Errorf("ParseElems: %v, %v", e, err)
	}
	if m, err := ParseMethods("stream,loop"); err != nil || !slices.Equal(m, []Method{MethodStream, MethodLoop}) {
		t.Errorf("ParseMethods: %v, %v", m, err)
	}
	if o, err := ParseOrders("swapped,native"); err != nil || !slices.Equal(o, []Order{OrderSwapped, OrderNative}) {
		t.Errorf("ParseOrders: %v, %v", o, err)
	}
	if k, err := ParseKinds("object, data"); err != nil || !slices.Equal(k, []serialization.Kind{serialization.KindObject, serialization.KindData}) {
		t.Errorf("ParseKinds: %v, %v", k, err)
	}
	for name, f := range map[string]func(string) error{
		"sizes":   func(s string) error { _, err := ParseSizes(s); return err },
		"elems":   func(s string) error { _, err := ParseElems(s); return err },
		"methods": func(s string) error { _, err := ParseMethods(s); return err },
		"orders":  func(s string) error { _, err := ParseOrders(s); return err },
		"kinds":   func(s string) error { _, err := ParseKinds(s); return err },
	} {
		for _, in := range []string{"", "bogus", "native,,swapped"} {
			if err := f(in); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s %q: %v, want ErrInvalid", name, in, err)
			}
		}
	}
}

func TestNames(t *testing.T) {
	for e := ElemByte; e <= ElemFloat64; e++ {
		if got, err := ParseElem(e.String()); err != nil || got != e {
			t.Errorf("ParseElem(%q) = %v, %v", e, got, err)
		}
		if b, _ := e.MarshalText(); string(b) != e.String() {
			t.Errorf("MarshalText %q", b)
		}
	}
	if Elem(-1).Size() != 0 || Elem(99).String() != "Elem(99)" || Method(9).String() != "Method(9)" ||
		Order(5).String() != "Order(5)" || Direction(4).String() != "Direction(4)" || Statistic(8).String() != "Statistic(8)" {
		t.Error("names of invalid values")
	}
	if OrderNative.ByteOrder() != serialization.NativeOrder() || OrderSwapped.ByteOrder() == serialization.NativeOrder() {
		t.Error("byte orders")
	}
	for _, v := range []interface{ MarshalText() ([]byte, error) }{MethodView, OrderSwapped, Read} {
		if b, err := v.MarshalText(); err != nil || len(b) == 0 {
			t.Errorf("MarshalText of %v: %q, %v", v, b, err)
		}
	}
}
