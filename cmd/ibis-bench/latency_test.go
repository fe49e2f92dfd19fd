package main

import (
	"strings"
	"testing"
	"time"
)

// TestLatencyReport: ratios are to the first variant, per round and of the lower
// sextiles, and to the raw socket.
func TestLatencyReport(t *testing.T) {
	vs, err := parseVariants("tcp,nio:blocking/blocking")
	if err != nil {
		t.Fatal(err)
	}
	ms := [][]float64{
		{10e-6, 10e-6, 10e-6, 10e-6, 10e-6, 10e-6},
		{20e-6, 20e-6, 20e-6, 20e-6, 20e-6, 20e-6},
		{22e-6, 24e-6, 24e-6, 24e-6, 24e-6, 30e-6},
	}
	rep, err := latencyReport("test", timer{reps: 6, minBatch: time.Millisecond}, 0, vs, ms)
	if err != nil {
		t.Fatal(err)
	}
	rows := rep.Tables[0].Rows
	if len(rows) != 3 || rows[2][0] != "raw socket" {
		t.Fatalf("rows %v", rows)
	}
	nio := rows[1]
	// The lower sextile of six is the smallest: 22 µs against 20 µs and 10 µs.
	if nio[1].(time.Duration) != 22*time.Microsecond || rel(nio[4].(float64), 1.1) > 1e-9 || nio[5].(string) != "1.200 (1.100-1.500)" || rel(nio[6].(float64), 2.2) > 1e-9 {
		t.Fatalf("nio row %v", nio)
	}
	if rows[0][4].(float64) != 1 || rows[2][6].(float64) != 1 {
		t.Fatalf("reference rows %v", rows)
	}
}

// TestLatencyRun compares tcp and nio blocking/blocking end to end with a small
// payload (each echo is checked before timing).
func TestLatencyRun(t *testing.T) {
	out, rep := mustRun(t, "latency", "-variants", "tcp,nio:blocking/blocking,nio:nonblocking/thread", "-size", "40",
		"-reps", "3", "-min-batch", "0", "-warmup", "2")
	for _, want := range []string{"40-byte round trip", "nio:blocking/blocking", "nio:nonblocking/thread", "raw socket", "vs tcp"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	vs := rep["values"].(map[string]any)["variants"].([]any)
	if len(vs) != 4 {
		t.Fatalf("%d variants: %v", len(vs), vs)
	}
	for _, v := range vs {
		if r, ok := v.(map[string]any)["round_trip_seconds"].(float64); !ok || r <= 0 {
			t.Errorf("variant %v", v)
		}
	}
}
