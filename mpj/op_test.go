package mpj

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/ibisgo/ibis/ipl"
)

func TestCombine(t *testing.T) {
	i := []int32{6, -3, 5}
	combine(Prod, i, i, []int32{2, 2, -1})
	if !slices.Equal(i, []int32{12, -6, -5}) {
		t.Errorf("Prod: %v", i)
	}
	u := []uint8{0b1100, 0b1010}
	combine(BAnd, u, u, []uint8{0b1010, 0b1010})
	combine(BXor, u, u, []uint8{0b0001, 0b1010})
	if !slices.Equal(u, []uint8{0b1001, 0}) {
		t.Errorf("BAnd, BXor: %b", u)
	}
	b := []bool{true, false}
	combine(LXor, b, b, []bool{true, true})
	if !slices.Equal(b, []bool{false, true}) {
		t.Errorf("LXor: %v", b)
	}
	f := []float64{1, math.NaN()}
	combine(Max, f, f, []float64{math.NaN(), 2})
	if !math.IsNaN(f[0]) || !math.IsNaN(f[1]) {
		t.Errorf("Max with NaN: %v", f)
	}
}

func TestOpAppliesTo(t *testing.T) {
	for _, c := range []struct {
		op Op
		d  Datatype
		ok bool
	}{
		{Sum, Float64, true}, {Sum, Bool, false}, {LAnd, Bool, true}, {LAnd, Int32, false},
		{BXor, Uint64, true}, {BXor, Float32, false}, {Op(0), Int, false}, {Op(99), Int, false},
	} {
		err := c.op.appliesTo(c.d)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrTypeMismatch)) {
			t.Errorf("%s on %s: %v", c.op, c.d, err)
		}
	}
	if Sum.String() != "Sum" || Float64.String() != "float64" || Op(99).String() != "Op(99)" {
		t.Errorf("names: %s %s %s", Sum, Float64, Op(99))
	}
}

func TestBinomialShape(t *testing.T) {
	for p := 1; p <= 9; p++ {
		covered := 0
		if got := subtree(0, p); got != p {
			t.Errorf("p=%d: root subtree %d", p, got)
		}
		// Every rank but the root is in exactly one child subtree of its parent.
		for vr := 1; vr < p; vr++ {
			parent := vr - lowbit(vr)
			if vr+subtree(vr, p) > parent+subtree(parent, p) {
				t.Errorf("p=%d: subtree of %d leaves its parent's", p, vr)
			}
			covered++
		}
		if covered != p-1 {
			t.Errorf("p=%d: %d covered", p, covered)
		}
		if m := topMask(p); p > 1 && (m >= p || 2*m < p) {
			t.Errorf("topMask(%d) = %d", p, m)
		}
	}
}

func TestLocAndUserOps(t *testing.T) {
	f := []float64{3, 7, 2, 5, 1, 9}
	combine(MaxLoc, f, f, []float64{3, 4, 8, 1, 0, 0})
	if !slices.Equal(f, []float64{3, 4, 8, 1, 1, 9}) {
		t.Errorf("MaxLoc: %v (a tie keeps the smaller index)", f)
	}
	i := []int32{3, 7, 2, 5}
	combine(MinLoc, i, i, []int32{3, 4, 8, 1})
	if !slices.Equal(i, []int32{3, 4, 2, 5}) {
		t.Errorf("MinLoc: %v", i)
	}
	if err := MaxLoc.appliesTo(Bool); !errors.Is(err, ErrTypeMismatch) {
		t.Errorf("MaxLoc on bool: %v", err)
	}
	sub, err := NewOp(func(a, b int64) int64 { return a - b }, false)
	if err != nil {
		t.Fatal(err)
	}
	if sub.commutative() || sub.appliesTo(Int64) != nil || !errors.Is(sub.appliesTo(Int32), ErrTypeMismatch) {
		t.Errorf("user op: commutative %v, on int64 %v", sub.commutative(), sub.appliesTo(Int64))
	}
	d := []int64{10, 1}
	combine(sub, d, d, []int64{3, 5})
	if !slices.Equal(d, []int64{7, -4}) {
		t.Errorf("user op a-b: %v", d)
	}
	sub.Free()
	if err := sub.appliesTo(Int64); !errors.Is(err, ipl.ErrInvalidArgument) {
		t.Errorf("a freed op: %v", err)
	}
}
