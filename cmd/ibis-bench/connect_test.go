package main

import (
	"strings"
	"testing"
)

func TestConnectRun(t *testing.T) {
	out, rep := mustRun(t, "connect", "-reps", "3", "-pool-sizes", "2,3", "-join-reps", "2", "-procs", "1")
	for _, want := range []string{"create send port", "connect", "raw dial", "joining a pool"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	join := rep["values"].(map[string]any)["join"].(map[string]any)
	for _, p := range []string{"2", "3"} {
		runs := join[p].(map[string]any)["runs"].([]any)
		if len(runs) != 2 {
			t.Errorf("P=%s: %d runs", p, len(runs))
		}
	}
}
