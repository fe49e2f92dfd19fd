package main

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyNonFinite: a body with a NaN acceleration, the tree's or direct summation's,
// counts as an infinite error and fails -verify, naming the body, instead of passing as
// error 0; the other bodies still give the median.
func TestVerifyNonFinite(t *testing.T) {
	s := plummer(8, 1, 1)
	sequential(t, s, defaultConfig(t, "-steps", "0", "-theta", "0"))
	// The tree's acceleration of body 1; direct summation's of bodies 3 and 4, whose
	// distance overflows.
	s.acc[1][2] = math.NaN()
	s.pos[3], s.pos[4] = vec{1e308, 0, 0}, vec{-1e308, 0, 0}
	a := checkAccuracy(s, 0.025, sample(s.n()))
	err := a.err()
	if !errors.Is(err, errNonFinite) || !strings.Contains(err.Error(), "3 of the 8 bodies compared") ||
		!strings.Contains(err.Error(), "(bodies 1, 3, 4)") {
		t.Errorf("err %v, want errNonFinite naming bodies 1, 3 and 4 of 8", err)
	}
	if !math.IsInf(a.p99, 1) || !math.IsInf(a.rms, 1) || math.IsInf(a.median, 0) || math.IsNaN(a.median) {
		t.Errorf("median %g, 99th percentile %g, rms %g; want a finite median and the others +Inf", a.median, a.p99, a.rms)
	}
}

// TestVerifyNonFiniteExit: the program exits 1 (exitFailure) when -verify meets non-finite
// forces: two bodies at one place without softening (-eps 0), 1/0 apart. (Input of
// +-1e308, whose distances overflow, is refused when read.)
func TestVerifyNonFiniteExit(t *testing.T) {
	in := filepath.Join(t.TempDir(), "same.txt")
	if err := os.WriteFile(in, []byte("2\n3\n0\n0.5\n0.5\n0 0 0\n0 0 0\n0 0 0\n0 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := barneshut(t, "-q", "-input", in, "-steps", "1", "-eps", "0", "-verify")
	if code != exitFailure || !strings.Contains(stderr, "non-finite forces: 2 of the 2 bodies") ||
		!strings.Contains(stdout, "rms +Inf") {
		t.Errorf("exit %d, want %d with the non-finite bodies named\nstdout:\n%s\nstderr:\n%s", code, exitFailure, stdout, stderr)
	}
}
