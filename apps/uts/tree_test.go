package main

import "testing"

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
