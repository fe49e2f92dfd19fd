package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadPointsMedians(t *testing.T) {
	in := "# latency sweep\nrs 10 3.0\ncrs 10 2.0\nrs 1 1.0 extra\nrs 10 1.0\nrs 10 2.0\n\nrs 1 5.0\n"
	ss, err := readPoints(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 2 || ss[0].name != "rs" || ss[1].name != "crs" {
		t.Fatalf("series %v, want rs then crs", ss)
	}
	if got := ss[0].xs; len(got) != 2 || got[0] != 1 || got[1] != 10 {
		t.Errorf("rs's x values %v, want [1 10]", got)
	}
	for _, c := range []struct {
		x           float64
		lo, med, hi float64
	}{{10, 1, 2, 3}, {1, 1, 3, 5}} {
		lo, med, hi := spread(ss[0].ys[c.x])
		if lo != c.lo || med != c.med || hi != c.hi {
			t.Errorf("rs at %g: %g %g %g, want %g %g %g", c.x, lo, med, hi, c.lo, c.med, c.hi)
		}
	}
}

func TestBadInput(t *testing.T) {
	for _, in := range []string{"", "# nothing\n", "rs 10\n", "rs ten 1\n", "rs 1 fast\n"} {
		if _, err := readPoints(strings.NewReader(in)); !errors.Is(err, errInput) {
			t.Errorf("%q: %v, want errInput", in, err)
		}
	}
	if err := run(nil, strings.NewReader("rs 1 1\n"), filepath.Join(t.TempDir(), "p.jpg"), "", "", ""); err == nil {
		t.Error("a .jpg output was accepted")
	}
}

func TestWritesPNG(t *testing.T) {
	out := filepath.Join(t.TempDir(), "lat.png")
	in := "rs 1 1.2\nrs 1 1.4\nrs 10 1.9\ncrs 1 1.1\ncrs 10 1.5\ncrs 10 1.7\n"
	if err := run(nil, strings.NewReader(in), out, "run time", "latency (ms)", "s"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 1000 || string(b[1:4]) != "PNG" {
		t.Errorf("%s: %d bytes, not a PNG", out, len(b))
	}
}

// The points come from the files named (stdin left alone); a bad -o is said before any
// input is read, so that it does not wait for a terminal's stdin first.
func TestReadsFilesAndChecksOutputFirst(t *testing.T) {
	dir := t.TempDir()
	pts := filepath.Join(dir, "pts")
	if err := os.WriteFile(pts, []byte("rs 1 1.2\nrs 10 1.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	untouched := iotest.ErrReader(errors.New("stdin read"))
	if err := run([]string{pts}, untouched, filepath.Join(dir, "p.png"), "", "", ""); err != nil {
		t.Fatalf("from a file: %v", err)
	}
	if err := run(nil, untouched, filepath.Join(dir, "p.jpg"), "", "", ""); err == nil || !strings.Contains(err.Error(), "-o") {
		t.Fatalf("a .jpg output: %v, want the -o error before stdin is read", err)
	}
	if err := run([]string{filepath.Join(dir, "none")}, untouched, filepath.Join(dir, "p.png"), "", "", ""); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v, want os.ErrNotExist", err)
	}
}
