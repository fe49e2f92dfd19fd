package main

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// mortonOrder sorts as a comparison sort by (key, index) does, for keys with few distinct
// values (ties), keys that differ only in high bits, and random 63-bit keys.
func TestMortonOrderMatchesComparisonSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := map[string]func(int) uint64{
		"ties":      func(int) uint64 { return uint64(r.IntN(5)) },
		"high bits": func(int) uint64 { return uint64(r.IntN(16)) << 58 },
		"random":    func(int) uint64 { return r.Uint64() >> 1 },
		"equal":     func(int) uint64 { return 42 },
	}
	for name, gen := range cases {
		for _, n := range []int{0, 1, 2, 3, 100, 5000} {
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = gen(i)
			}
			want := make([]int32, n)
			for i := range want {
				want[i] = int32(i)
			}
			slices.SortStableFunc(want, func(a, b int32) int {
				switch {
				case keys[a] < keys[b]:
					return -1
				case keys[a] > keys[b]:
					return 1
				}
				return 0
			})
			order, sorted := mortonOrder(keys)
			if !slices.Equal(order, want) {
				t.Fatalf("%s, n=%d: order differs from the comparison sort", name, n)
			}
			for j, i := range order {
				if sorted[j] != keys[i] {
					t.Fatalf("%s, n=%d: sorted[%d] = %d, keys[order[%d]] = %d", name, n, j, sorted[j], j, keys[i])
				}
			}
		}
	}
}
