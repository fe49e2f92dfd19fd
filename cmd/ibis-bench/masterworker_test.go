package main

import (
	"strings"
	"testing"
	"time"
)

// TestMasterWorkerReport: the figure is the median of the runs and the ratio is
// Ibis over raw.
func TestMasterWorkerReport(t *testing.T) {
	f := mwFlags{perProcess: 4, reps: 3, duration: time.Second}
	points := []mwPoint{
		{workers: 1, ibis: []float64{900, 1000, 5000}, raw: []float64{2000, 2100, 1900}},
		{workers: 4, ibis: []float64{3000, 100, 3100}, raw: []float64{6000, 6200, 6100}},
	}
	rep := mwReport("test", "tcp", f, 2, 8, points, []int{16})
	rows := rep.Tables[0].Rows
	if rows[0][1].(float64) != 1000 || rows[0][2].(float64) != 2000 || rows[0][3].(float64) != 0.5 {
		t.Fatalf("row %v, want median 1000, raw 2000, ratio 0.5", rows[0])
	}
	if rows[1][1].(float64) != 3000 || rows[1][2].(float64) != 6100 {
		t.Fatalf("row %v", rows[1])
	}
	if rows[0][4].(time.Duration) != time.Millisecond {
		t.Fatalf("time per request %v, want 1ms", rows[0][4])
	}
	notes := strings.Join(rep.Tables[0].Notes, "\n")
	if !strings.Contains(notes, "OWN Ibis instance") || !strings.Contains(notes, "[16]") {
		t.Fatalf("notes:\n%s", notes)
	}
}

func TestMasterWorkerRun(t *testing.T) {
	out, rep := mustRun(t, "masterworker", "-workers", "1,2,3", "-workers-per-process", "2",
		"-duration", "30ms", "-reps", "1")
	for _, want := range []string{"requests per second", "Ibis/raw", "2 per worker process"} {
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
