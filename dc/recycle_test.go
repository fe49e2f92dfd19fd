package dc

import (
	"reflect"
	"testing"
)

// TestHasPointers checks which kinds' tasks must let go of their argument and result.
func TestHasPointers(t *testing.T) {
	type flat struct {
		A int
		B [3]float64
	}
	type deep struct {
		A int
		B []byte
	}
	for _, c := range []struct {
		typ  reflect.Type
		want bool
	}{
		{reflect.TypeFor[int](), false},
		{reflect.TypeFor[flat](), false},
		{reflect.TypeFor[[0]*int](), false},
		{reflect.TypeFor[struct{}](), false},
		{reflect.TypeFor[string](), true},
		{reflect.TypeFor[[]int](), true},
		{reflect.TypeFor[deep](), true},
		{reflect.TypeFor[[2]deep](), true},
		{reflect.TypeFor[map[int]int](), true},
		{reflect.TypeFor[any](), true},
		{reflect.TypeFor[*int](), true},
	} {
		if got := typeHasPointers(c.typ); got != c.want {
			t.Errorf("typeHasPointers(%v) = %v, want %v", c.typ, got, c.want)
		}
	}
}
