package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPingpongFit: curves made from a known Hockney model must give its ts and tb
// back, the ratios to the raw curve must be what was put in, and the tables must
// carry every size.
func TestPingpongFit(t *testing.T) {
	const rawTs, rawTb = 10e-6, 0.2e-9
	const ts, tb = 15e-6, 0.25e-9
	raw := &curve{name: "raw socket"}
	ib := &curve{name: "bytes"}
	for _, n := range powersOfFour(1 << 20) {
		raw.N, raw.T = append(raw.N, float64(n)), append(raw.T, rawTs+rawTb*float64(n))
		ib.N, ib.T = append(ib.N, float64(n)), append(ib.T, ts+tb*float64(n))
	}
	rep, err := pingpongReport("test", timer{reps: 150}, raw, []*curve{ib})
	if err != nil {
		t.Fatal(err)
	}
	h := rep.Values["hockney"].(map[string]any)
	got := h["bytes"].(map[string]any)
	if rel(got["ts_seconds"].(float64), ts) > 1e-6 || rel(got["tb_seconds_per_byte"].(float64), tb) > 1e-6 {
		t.Fatalf("fit %v, want ts=%v tb=%v", got, ts, tb)
	}
	gotRaw := h["raw socket"].(map[string]any)
	if rel(gotRaw["ts_seconds"].(float64), rawTs) > 1e-6 || rel(gotRaw["tb_seconds_per_byte"].(float64), rawTb) > 1e-6 {
		t.Fatalf("raw fit %v", gotRaw)
	}
	table := rep.Tables[0]
	if len(table.Rows) != len(powersOfFour(1<<20)) {
		t.Fatalf("%d rows", len(table.Rows))
	}
	last := table.Rows[len(table.Rows)-1]
	wantRatio := (ts + tb*(1<<20)) / (rawTs + rawTb*(1<<20))
	if rel(last[5].(float64), wantRatio) > 1e-9 {
		t.Fatalf("ratio %v, want %v", last[5], wantRatio)
	}
	if len(rep.Plots) != 2 {
		t.Fatalf("%d plots", len(rep.Plots))
	}
}

// One size has no Hockney fit: the table stands with a note saying why, where the whole
// report used to be thrown away.
func TestPingpongOneSize(t *testing.T) {
	raw := &curve{name: "raw socket", N: []float64{1024}, T: []float64{10e-6}}
	ib := &curve{name: "bytes", N: []float64{1024}, T: []float64{15e-6}}
	rep, err := pingpongReport("test", timer{reps: 150}, raw, []*curve{ib})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tables) != 1 || len(rep.Tables[0].Rows) != 1 || len(rep.Plots) != 2 {
		t.Fatalf("%d tables, %d plots; want the one measured table and both plots", len(rep.Tables), len(rep.Plots))
	}
	notes := strings.Join(rep.Tables[0].Notes, "\n")
	if !strings.Contains(notes, "no Hockney fit") || !strings.Contains(notes, "two different sizes or more") {
		t.Fatalf("notes %q: want the missing fit explained", notes)
	}
	if _, ok := rep.Values["hockney"]; ok {
		t.Fatal("a fit reported from one size")
	}
}

// TestPingpongRun runs the experiment end to end: this test process and a peer
// process (the test binary started again), the Ibis echo and the raw echo.
func TestPingpongRun(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "pp.png")
	out, rep := mustRun(t, "pingpong", "-sizes", "0,64,4096,16384", "-reps", "6", "-min-batch", "0",
		"-warmup", "1", "-types", "bytes,float64,objects", "-plot", plot)
	for _, want := range []string{"pingpong bytes", "pingpong float64", "pingpong objects", "Hockney", "raw socket", "T/raw"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	values := rep["values"].(map[string]any)
	if values["implementation"] != "tcp" {
		t.Errorf("implementation %v", values["implementation"])
	}
	for _, name := range []string{"bytes", "float64", "objects", "raw socket"} {
		f, ok := values["hockney"].(map[string]any)[name].(map[string]any)
		if !ok || math.IsNaN(f["ts_seconds"].(float64)) {
			t.Errorf("no fit for %s: %v", name, values["hockney"])
		}
	}
	for _, p := range []string{"pp.png", "pp-2.png"} { // latency under the name asked for, then bandwidth
		if st, err := os.Stat(filepath.Join(filepath.Dir(plot), p)); err != nil || st.Size() == 0 {
			t.Errorf("plot %s: %v", p, err)
		}
	}
}

func rel(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }
