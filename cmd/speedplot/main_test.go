package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/internal/figure"
)

func TestPlotFromTimings(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.png")
	in := "# impl P seconds\ntcp 1 8.3 x\ntcp 2 3.8\ntcp 2 4.8\nnio 1 9.1\nnio 2 4.3\n\n"
	if err := run(nil, strings.NewReader(in), out, "t"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
		t.Fatalf("no PNG written: %d bytes, %v", len(b), err)
	}
	best, err := readTimings(strings.NewReader(in))
	if err != nil || best["tcp"][2] != 3.8 {
		t.Fatalf("best time of tcp on 2: %v, %v; want 3.8", best["tcp"][2], err)
	}
}

func TestBadInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.png")
	for _, in := range []string{"", "tcp 2\n", "tcp two 3\n", "tcp 0 1\n", "tcp 1 -1\n", "tcp 2 1.0\n"} {
		if err := run(nil, strings.NewReader(in), out, "t"); !errors.Is(err, errInput) {
			t.Errorf("%q: %v, want errInput", in, err)
		}
	}
	if err := run(nil, strings.NewReader("tcp 1 1\n"), filepath.Join(t.TempDir(), "s.txt"), "t"); err == nil {
		t.Error("a .txt output was accepted")
	}
}

// TestAxes: the process axis labels the counts measured (not 1.5 processes), the speedup
// axis several values.
func TestAxes(t *testing.T) {
	best, err := readTimings(strings.NewReader("tcp 1 8\ntcp 2 4.5\ntcp 4 3\nmp 1 9\nmp 2 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := speedupPlot(best, "t")
	if err != nil {
		t.Fatal(err)
	}
	if got := figure.Labels(&p.X); !slices.Equal(got, []string{"1", "2", "4"}) {
		t.Errorf("process axis labels %q, want 1 2 4", got)
	}
	if got := figure.Labels(&p.Y); len(got) < 2 {
		t.Errorf("speedup axis labels %q", got)
	}
}
