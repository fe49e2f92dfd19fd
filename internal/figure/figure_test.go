package figure

import (
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// labels returns what an axis marked by m shows over [lo, hi].
func labels(m plot.Ticker, lo, hi float64) []string {
	p := plot.New()
	p.X.Min, p.X.Max, p.X.Tick.Marker = lo, hi, m
	return Labels(&p.X)
}

func TestLogTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{5, 3000, []string{"10", "100", "1000"}},
		{1, 1048576, []string{"1", "10", "100", "1000", "10000", "100000", "1e6"}},
		{1, 64, []string{"1", "2", "5", "10", "20", "50"}},
		{8, 60, []string{"10", "20", "50"}},
		{0.09, 0.9, []string{"0.1", "0.2", "0.5"}},
		{12, 35, []string{"20", "30"}},
		{12, 18, []string{"12", "13", "14", "15", "16", "17", "18"}},
		{2e-6, 3e-6, []string{"2e-6", "3e-6"}},
	} {
		if got := labels(LogTicks{}, c.lo, c.hi); !slices.Equal(got, c.want) {
			t.Errorf("LogTicks over [%g, %g]: %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
	for _, r := range [][2]float64{{0, 10}, {-5, 5}, {7, 7}} {
		_ = LogTicks{}.Ticks(r[0], r[1]) // no panic on what a log axis cannot show
	}
}

func TestLinearTicks(t *testing.T) {
	for _, r := range [][2]float64{{0, 10}, {0.95, 1.05}, {20000, 70000}, {-1, 1}, {4.56, 9.85}, {1, 1.0000001}} {
		if got := labels(LinearTicks{}, r[0], r[1]); len(got) < 2 {
			t.Errorf("LinearTicks over %v: %q, want at least two labels", r, got)
		}
	}
	if got := labels(LinearTicks{}, 3, 3); len(got) != 1 {
		t.Errorf("one value: %q", got)
	}
}

func TestNumber(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 1: "1", 0.30000000000000004: "0.3", 250000: "250000",
		1e6: "1e6", 2.5e-5: "2.5e-5", -40: "-40", 123456.7: "123500"} {
		if got := Number(v); got != want {
			t.Errorf("Number(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestSaveLegendBeside: the legend widens the figure instead of covering the data.
func TestSaveLegendBeside(t *testing.T) {
	dir := t.TempDir()
	p := plot.New()
	line, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 1}, {X: 2, Y: 4}})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(line)
	plain := filepath.Join(dir, "plain.png")
	if err := Save(p, 10*vg.Centimeter, 8*vg.Centimeter, plain); err != nil {
		t.Fatal(err)
	}
	p.Legend.Add("a rather long curve name", line)
	withLegend := filepath.Join(dir, "legend.png")
	if err := Save(p, 10*vg.Centimeter, 8*vg.Centimeter, withLegend); err != nil {
		t.Fatal(err)
	}
	if w0, w1 := pngWidth(t, plain), pngWidth(t, withLegend); w1 <= w0 {
		t.Errorf("with a legend %d px wide, without %d px", w1, w0)
	}
	if err := Save(p, 10*vg.Centimeter, 8*vg.Centimeter, filepath.Join(dir, "x.svg")); err != nil {
		t.Fatal(err)
	}
	if err := Save(p, 10*vg.Centimeter, 8*vg.Centimeter, filepath.Join(dir, "x.gif")); !errors.Is(err, ErrFormat) {
		t.Errorf("gif: %v", err)
	}
	if err := Save(p, 10*vg.Centimeter, 8*vg.Centimeter, filepath.Join(dir, "no-such-dir", "x.png")); err == nil {
		t.Error("a file in a missing folder: no error")
	}
}

func TestSaveWithColorBar(t *testing.T) {
	dir := t.TempDir()
	stops := []color.RGBA{{0, 0, 255, 255}, {255, 0, 0, 255}}
	p := plot.New()
	p.Add(plotter.NewImage(colorSquare(), 0, 0, 10, 10))
	if err := SaveWithColorBar(p, NewGradient(stops, 4.5, 9.9), "value", 10*vg.Centimeter, 8*vg.Centimeter, filepath.Join(dir, "c.png")); err != nil {
		t.Fatal(err)
	}
	if got := Labels(&ColorBar(NewGradient(stops, 4.5, 9.9), "v").Y); len(got) < 2 {
		t.Errorf("colour bar labels %q", got)
	}
	if err := SaveWithColorBar(p, NewGradient(stops, 1, 1), "value", 10*vg.Centimeter, 8*vg.Centimeter, filepath.Join(dir, "d.png")); err == nil {
		t.Error("an empty range: no error")
	}
}

func TestGradient(t *testing.T) {
	g := NewGradient([]color.RGBA{{0, 0, 0, 255}, {200, 100, 0, 255}}, 0, 2)
	if got := g.RGBA(1); got != (color.RGBA{100, 50, 0, 255}) {
		t.Errorf("middle: %v", got)
	}
	if g.RGBA(-5) != g.RGBA(0) || g.RGBA(7) != g.RGBA(2) {
		t.Error("values outside the range are not clamped")
	}
	if _, err := g.At(3); err == nil {
		t.Error("At outside the range: no error")
	}
	if n := len(g.Palette(5).Colors()); n != 5 {
		t.Errorf("palette of %d", n)
	}
}

// colorSquare is a small picture to put in a plot.
func colorSquare() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for i := range 16 {
		img.SetRGBA(i%4, i/4, color.RGBA{uint8(16 * i), 0, 0, 255})
	}
	return img
}

func pngWidth(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img.Bounds().Dx()
}

func TestLinearTicksRound(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{0.03, 0.48, []string{"0.1", "0.2", "0.3", "0.4"}},
		{0, 10, []string{"0", "2", "4", "6", "8", "10"}},
		{1, 4, []string{"1", "1.5", "2", "2.5", "3", "3.5", "4"}},
		{-0.5, 31.5, []string{"0", "5", "10", "15", "20", "25", "30"}},
		{20000, 70000, []string{"20000", "30000", "40000", "50000", "60000", "70000"}},
		{-7, -2, []string{"-7", "-6", "-5", "-4", "-3", "-2"}},
	} {
		if got := labels(LinearTicks{}, c.lo, c.hi); !slices.Equal(got, c.want) {
			t.Errorf("LinearTicks over [%g, %g]: %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}

// ReadInput joins the files named, or reads stdin, and names a file it cannot read.
func TestReadInput(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, []byte("x 1 2"), 0o644); err != nil { // no final newline
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("y 3 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadInput([]string{a, "-", b}, strings.NewReader("z 5 6\n"))
	if err != nil || string(got) != "x 1 2\nz 5 6\ny 3 4\n" {
		t.Fatalf("files and stdin: %q, %v", got, err)
	}
	if got, err := ReadInput(nil, strings.NewReader("s 1 1\n")); err != nil || string(got) != "s 1 1\n" {
		t.Fatalf("stdin: %q, %v", got, err)
	}
	missing := filepath.Join(dir, "none")
	if _, err := ReadInput([]string{missing}, strings.NewReader("")); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("a missing file: %v, want it named and matching os.ErrNotExist", err)
	}
}
