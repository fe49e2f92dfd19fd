package main

import "testing"

// The sequential kernel's two row orders at N = 2048 (docs/SOR.md): two sweeps of the whole
// grid per iteration, and the wavefront pass apps/sor uses.
//
//	go test -run XXX -bench Kernel ./apps/sor/

func BenchmarkKernelTwoSweeps(b *testing.B) {
	const n = 2048
	g, pr := newBlock(n, 1, 0), newParams(n)
	for b.Loop() {
		g.sweep(1, n, 0, pr.omega)
		g.sweep(1, n, 1, pr.omega)
	}
}

func BenchmarkKernelWavefront(b *testing.B) {
	const n = 2048
	g, pr := newBlock(n, 1, 0), newParams(n)
	for b.Loop() {
		if _, err := g.iterate(pr.omega, false, alone{}); err != nil {
			b.Fatal(err)
		}
	}
}
