package main

import (
	"strings"
	"testing"
)

// The sample trees of UTS with their published sizes (UTS's sample_trees.sh).
var sampleTrees = []struct {
	name  string
	p     params
	nodes int64
}{
	{"T1 geometric fixed", params{Type: geometric, Shape: fixed, Depth: 10, B0: 4, Seed: 19}, 4130071},
	{"T2 geometric cyclic", params{Type: geometric, Shape: cyclic, Depth: 16, B0: 6, Seed: 502}, 4117769},
	{"T5 geometric linear", params{Type: geometric, Shape: linear, Depth: 20, B0: 4, Seed: 34}, 4147582},
	{"T3 binomial", params{Type: binomial, B0: 2000, Q: 0.124875, M: 8, Seed: 42, Depth: 1}, 4112897},
}

func TestSampleTreeSizes(t *testing.T) {
	for _, tc := range sampleTrees {
		if err := tc.p.check(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := tc.p.count(tc.p.root()); got != tc.nodes {
			t.Errorf("%s: %d nodes, published %d", tc.name, got, tc.nodes)
		}
	}
}

// A tree the search would likely never finish is refused, saying why (a binomial tree
// with q*m = 1.2 overflowed the worker's stack); trees with q*m at 1, or a little above
// it as UTS's published T3L, end and are taken.
func TestCheckRefusesEndlessTrees(t *testing.T) {
	for _, c := range []struct {
		p    params
		want string
	}{
		{params{Type: binomial, B0: 4, Q: 0.3, M: 4, Depth: 1}, "q*m = 0.3*4 = 1.2: a node has more than one child on average, and the tree ends with probability 0.6 only"},
		{params{Type: binomial, B0: 2000, Q: 0.21, M: 5, Depth: 1}, "ends with probability 3.5e-22 only"},
		{params{Type: 7, Depth: 1}, "tree type 7"},
	} {
		if err := c.p.check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error saying %q", c.p, err, c.want)
		}
	}
	for _, p := range []params{
		{Type: binomial, B0: 100, Q: 0.2, M: 5, Depth: 1},                 // q*m = 1: ends
		{Type: binomial, B0: 2000, Q: 0.200014, M: 5, Depth: 1},           // UTS's T3L
		{Type: binomial, B0: 2000, Q: 0.124875, M: 8, Seed: 42, Depth: 1}, // T3
	} {
		if err := p.check(); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	if e := (params{Type: binomial, B0: 2000, Q: 0.200014, M: 5}).ends(); e < 0.92 || e > 0.94 {
		t.Errorf("T3L ends with probability %v, want 0.93", e)
	}
}
