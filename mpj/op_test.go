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
		op   Op
		d    Datatype
		want error // nil: o applies to d
	}{
		{Sum, Float64, nil}, {Sum, Bool, ErrTypeMismatch}, {LAnd, Bool, nil}, {LAnd, Int32, ErrTypeMismatch},
		{BXor, Uint64, nil}, {BXor, Float32, ErrTypeMismatch}, {MinLoc, Int, nil},
		// No operators at all: not a type mismatch.
		{Op(0), Int, ipl.ErrInvalidArgument}, {MinLoc + 1, Int, ipl.ErrInvalidArgument},
		{Op(99), Int, ipl.ErrInvalidArgument}, {firstUserOp - 1, Bool, ipl.ErrInvalidArgument},
	} {
		err := c.op.appliesTo(c.d)
		if (err == nil) != (c.want == nil) || !errors.Is(err, c.want) ||
			(errors.Is(err, ipl.ErrInvalidArgument) && errors.Is(err, ErrTypeMismatch)) {
			t.Errorf("%s on %s: %v, want %v", c.op, c.d, err, c.want)
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

// TestBytewise: the word-at-a-time byte operators give the element loop's results, for
// every pair of byte values, at every length and alignment of the tail.
func TestBytewise(t *testing.T) {
	var a, b []byte
	for x := range 256 {
		for y := range 256 {
			a, b = append(a, byte(x)), append(b, byte(y))
		}
	}
	for _, o := range []Op{Sum, BAnd, BOr, BXor} {
		for _, n := range []int{0, 1, 7, 8, 9, 15, len(a)} {
			got := make([]byte, n)
			combine(o, got, a[:n], b[:n])
			for i := range n {
				var want byte
				switch o {
				case Sum:
					want = a[i] + b[i]
				case BAnd:
					want = a[i] & b[i]
				case BOr:
					want = a[i] | b[i]
				case BXor:
					want = a[i] ^ b[i]
				}
				if got[i] != want {
					t.Fatalf("%s of %d and %d: %d, want %d", o, a[i], b[i], got[i], want)
				}
			}
			i8 := make([]int8, n)
			ia, ib := make([]int8, n), make([]int8, n)
			for i := range n {
				ia[i], ib[i] = int8(a[i]), int8(b[i])
			}
			combine(o, i8, ia, ib)
			for i := range n {
				if byte(i8[i]) != got[i] {
					t.Fatalf("int8 %s of %d and %d: %d, want %d", o, ia[i], ib[i], i8[i], int8(got[i]))
				}
			}
		}
	}
}

// BenchmarkSumBytes: Sum on 1 MiB of bytes, the reduction the collectives benchmark makes.
func BenchmarkSumBytes(b *testing.B) {
	a, c := make([]byte, 1<<20), make([]byte, 1<<20)
	b.SetBytes(1 << 20)
	for b.Loop() {
		combine(Sum, a, a, c)
	}
}

// BenchmarkSumFloat64: Sum on 1 MiB of float64 (the element loop).
func BenchmarkSumFloat64(b *testing.B) {
	a, c := make([]float64, 1<<17), make([]float64, 1<<17)
	b.SetBytes(1 << 20)
	for b.Loop() {
		combine(Sum, a, a, c)
	}
}

// Sum on bytes gives the element loop's results at every alignment and length (the word
// loop runs only on 8-byte aligned slices).
func TestSumBytesAlignments(t *testing.T) {
	base := make([]byte, 300)
	for i := range base {
		base[i] = byte(i*37 + 11)
	}
	for off := range 9 {
		for _, n := range []int{0, 1, 7, 8, 31, 32, 33, 200} {
			a, b := base[off:off+n], base[off+n/3:off+n/3+n]
			d := make([]byte, n+off)[off:]
			combine(Sum, d, a, b)
			for i := range n {
				if d[i] != a[i]+b[i] {
					t.Fatalf("offset %d, length %d: byte %d is %d, want %d", off, n, i, d[i], a[i]+b[i])
				}
			}
		}
	}
}
