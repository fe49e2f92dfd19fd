package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/plot"

	"github.com/ibisgo/ibis/internal/figure"
)

func sample() *Report {
	r := New("demo")
	t := &Table{Title: "latency", Columns: []string{"size", "T(n)", "ratio", "label"}, Notes: []string{"a note"}}
	t.AddRow(0, 18*time.Microsecond+500*time.Nanosecond, 1.25, "small")
	t.AddRow(1048576, 2*time.Millisecond, math.NaN(), "large")
	r.Tables = append(r.Tables, t)
	r.Plots = append(r.Plots, &Plot{Title: "T", XLabel: "bytes", YLabel: "µs", LogX: true, LogY: true,
		Series: []Series{{Name: "ibis", X: []float64{0, 4, 16}, Y: []float64{18, 19, 20}}}})
	r.Set("ts", 1.5e-5)
	return r
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := sample().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `latency
   size      T(n)  ratio  label
-------  --------  -----  -----
      0  18.50 µs  1.250  small
1048576  2.000 ms      -  large
  a note
`
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{1234.5, "1234"}, {123.45, "123.5"}, {12.345, "12.35"}, {0.5, "0.500"}, {0.00012345, "0.000123"},
		{0.0, "0"}, {850 * time.Nanosecond, "850 ns"}, {1500 * time.Millisecond, "1.500 s"}, {int64(7), "7"}, {nil, ""},
	} {
		if got := FormatCell(c.v); got != c.want {
			t.Errorf("FormatCell(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	if err := sample().WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	var got struct {
		Command string
		Tables  []struct {
			Rows [][]any
		}
		Plots  []map[string]any
		Values map[string]float64
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if got.Command != "demo" || got.Values["ts"] != 1.5e-5 || len(got.Plots) != 1 {
		t.Fatalf("%+v", got)
	}
	row := got.Tables[0].Rows[1]
	if row[1].(float64) != 2e6 || row[2] != nil {
		t.Fatalf("durations must be ns and NaN null: %v", row)
	}
}

func TestSavePlot(t *testing.T) {
	dir := t.TempDir()
	r := sample()
	for _, name := range []string{"one.png", "one.svg"} {
		path := filepath.Join(dir, name)
		written, err := r.SavePlot(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(written) != 1 || written[0] != path {
			t.Fatalf("wrote %q, want just %q", written, path)
		}
		if st, err := os.Stat(path); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", name, err)
		}
	}
	r.Plots = append(r.Plots, &Plot{Title: "second", Series: []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{3, 4}}}})
	asked := filepath.Join(dir, "two.png")
	written, err := r.SavePlot(asked)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{asked, filepath.Join(dir, "two-2.png")}; !slices.Equal(written, want) {
		t.Fatalf("wrote %q, want %q", written, want)
	}
	for _, p := range written {
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.SavePlot(filepath.Join(dir, "x.gif")); !errors.Is(err, ErrFormat) {
		t.Fatalf("gif: %v", err)
	}
	if _, err := New("empty").SavePlot(filepath.Join(dir, "e.png")); !errors.Is(err, ErrNoPlot) {
		t.Fatalf("no plots: %v", err)
	}
	bad := &Report{Command: "bad", Plots: []*Plot{{LogY: true, Series: []Series{{Name: "neg", X: []float64{1}, Y: []float64{-1}}}}}}
	if _, err := bad.SavePlot(filepath.Join(dir, "b.png")); !errors.Is(err, ErrNoPlot) {
		t.Fatalf("only non-positive values on a log axis: %v", err)
	}
}

// TestPlotTicks: every axis shows several labelled ticks, also a log axis spanning less
// than a decade (a latency curve from 8 to 60 µs got one label before) and a linear one.
func TestPlotTicks(t *testing.T) {
	for _, pl := range []*Plot{
		{Title: "latency", LogX: true, LogY: true, Series: []Series{{Name: "a", X: []float64{1, 4, 16, 64}, Y: []float64{8, 9, 20, 60}}}},
		{Title: "workers", LogX: true, Series: []Series{{Name: "a", X: []float64{1, 2, 4, 8, 16, 32, 64}, Y: []float64{22000, 27000, 21000, 15000, 28000, 29000, 29700}}}},
		{Title: "linear", Series: []Series{{Name: "a", X: []float64{128, 1024}, Y: []float64{0.95, 1.05}}}},
		{Title: "decades", LogX: true, LogY: true, Series: []Series{{Name: "a", X: []float64{1, 1 << 20}, Y: []float64{0.09, 7000}}}},
	} {
		p, err := pl.render()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range []struct {
			name string
			axis *plot.Axis
		}{{"x", &p.X}, {"y", &p.Y}} {
			if got := figure.Labels(a.axis); len(got) < 2 {
				t.Errorf("%s: %s axis labels %q, want several", pl.Title, a.name, got)
			}
		}
	}
}
