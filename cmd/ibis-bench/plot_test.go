package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
)

// TestPlotNames: -plot FILE writes the first figure to FILE itself and the others to
// FILE-2, FILE-3, ..., and names every file it wrote on stderr (pingpong's -plot
// pingpong.png used to write pingpong-1.png and pingpong-2.png only).
func TestPlotNames(t *testing.T) {
	rep := report.New("demo")
	for _, title := range []string{"latency", "bandwidth", "third"} {
		rep.Plots = append(rep.Plots, &report.Plot{Title: title, XLabel: "bytes", YLabel: "µs", LogX: true, LogY: true,
			Series: []report.Series{{Name: "a", X: []float64{1, 4, 16}, Y: []float64{9, 10, 30}}}})
	}
	dir := t.TempDir()
	asked := filepath.Join(dir, "pingpong.png")
	var stdout, stderr bytes.Buffer
	if err := output(rep, commonFlags{plotPath: asked}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	want := []string{asked, filepath.Join(dir, "pingpong-2.png"), filepath.Join(dir, "pingpong-3.png")}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("stderr:\n%s\nwant one line per file", stderr.String())
	}
	for i, name := range want {
		if st, err := os.Stat(name); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
		if !strings.Contains(lines[i], "wrote "+name+" ("+rep.Plots[i].Title+")") {
			t.Errorf("line %d: %q, want it to name %s", i, lines[i], name)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(want) {
		t.Errorf("%d files in the folder, want %d", len(entries), len(want))
	}
}
