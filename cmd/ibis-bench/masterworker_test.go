package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestMasterWorkerReport: each variant's figure is the median of its runs and the
// ratio is that over raw's median.
func TestMasterWorkerReport(t *testing.T) {
	f := mwFlags{perProcess: 4, reps: 3, duration: time.Second, variants: []mwVariant{mwExplicit, mwConcurrent}}
	points := []mwPoint{
		{workers: 1, ibis: [][]float64{{900, 1000, 5000}, {4000, 3000, 3500}}, raw: []float64{2000, 2100, 1900}},
		{workers: 4, ibis: [][]float64{{3000, 100, 3100}, {1, 2, 3}}, raw: []float64{6000, 6200, 6100}},
	}
	rep := mwReport("test", "tcp", f, 2, 8, points, []int{16})
	tab := rep.Tables[0]
	want := []string{"workers", "explicit req/s", "concurrent req/s", "raw req/s", "explicit/raw", "concurrent/raw",
		"explicit µs/request", "concurrent µs/request"}
	if strings.Join(tab.Columns, "|") != strings.Join(want, "|") {
		t.Fatalf("columns %q, want %q", tab.Columns, want)
	}
	rows := tab.Rows
	if rows[0][1].(float64) != 1000 || rows[0][2].(float64) != 3500 || rows[0][3].(float64) != 2000 ||
		rows[0][4].(float64) != 0.5 || rows[0][5].(float64) != 1.75 {
		t.Fatalf("row %v, want medians 1000 and 3500, raw 2000, ratios 0.5 and 1.75", rows[0])
	}
	if rows[1][1].(float64) != 3000 || rows[1][2].(float64) != 2 || rows[1][3].(float64) != 6100 {
		t.Fatalf("row %v", rows[1])
	}
	if rows[0][6].(time.Duration) != time.Millisecond {
		t.Fatalf("time per request %v, want 1ms", rows[0][6])
	}
	notes := strings.Join(tab.Notes, "\n")
	if !strings.Contains(notes, "OWN Ibis instance") || !strings.Contains(notes, "[16]") {
		t.Fatalf("notes:\n%s", notes)
	}
}

// TestMasterVariants: -master takes the known names, once each, and refuses others.
func TestMasterVariants(t *testing.T) {
	vs, err := parseMasterVariants("concurrent, explicit,concurrent")
	if err != nil || len(vs) != 2 || vs[0] != mwConcurrent || vs[1] != mwExplicit {
		t.Fatalf("got %v, %v", vs, err)
	}
	for _, bad := range []string{"", "threads", "explicit,nope"} {
		if _, err := parseMasterVariants(bad); !errors.Is(err, errUsage) {
			t.Errorf("-master %q: got %v, want errUsage", bad, err)
		}
	}
}

// TestMasterWorkerVariants runs every master variant, taking turns with raw.
func TestMasterWorkerVariants(t *testing.T) {
	out, rep := mustRun(t, "masterworker", "-master", "explicit,upcall,concurrent", "-workers", "1,3",
		"-workers-per-process", "2", "-duration", "30ms", "-reps", "1")
	for _, want := range []string{"upcall req/s", "concurrent/raw", "explicit µs/request"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	points := rep["values"].(map[string]any)["points"].([]any)
	if len(points) != 2 {
		t.Fatalf("%d points: %v", len(points), points)
	}
	for _, p := range points {
		for _, v := range mwVariantNames {
			r, ok := p.(map[string]any)[v].(map[string]any)["requests_per_second"].(float64)
			if !ok || r <= 0 {
				t.Errorf("point %v: no rate for %s", p, v)
			}
		}
	}
}

func TestMasterWorkerRun(t *testing.T) {
	out, rep := mustRun(t, "masterworker", "-workers", "1,2,3", "-workers-per-process", "2",
		"-duration", "30ms", "-reps", "1")
	for _, want := range []string{"requests per second", "explicit/raw", "2 per worker process"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	points := rep["values"].(map[string]any)["points"].([]any)
	if len(points) != 3 {
		t.Fatalf("%d points: %v", len(points), points)
	}
	for _, p := range points {
		if r, ok := p.(map[string]any)["requests_per_second"].(float64); !ok || r <= 0 {
			t.Errorf("point %v", p)
		}
	}
}

// TestMasterWorkerNio runs the experiment over impl/nio with the thread flavours
// (the master's many-to-one receive port and every worker's ports).
func TestMasterWorkerNio(t *testing.T) {
	_, rep := mustRun(t, "masterworker", "-impl", "nio", "-nio-send", "thread", "-nio-receive", "thread",
		"-workers", "1,2", "-workers-per-process", "1", "-duration", "30ms", "-reps", "1", "-no-raw")
	values := rep["values"].(map[string]any)
	if values["implementation"] != "nio" || len(values["points"].([]any)) != 2 {
		t.Fatalf("values %v", values)
	}
	if p := values["properties"].(map[string]any); p["nio.send"] != "thread" || p["nio.receive"] != "thread" {
		t.Fatalf("properties %v", p)
	}
}
