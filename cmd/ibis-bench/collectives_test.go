package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/mpicoll"
)

// TestCollectivesReport: points made from a known T(n) = ts + tb*n must give ts and
// tb back, and the ratio at the largest size must be mpj's over MPI's.
func TestCollectivesReport(t *testing.T) {
	cfg := collConfig{procs: []int{2, 4}, ops: []string{"barrier", "bcast"}, sizes: powersOfFour(1 << 20), reps: 3, mpi: "auto"}
	r := &collResults{cfg: cfg, cpus: 2, impl: "tcp", where: "test", procs: cfg.procs, mpiNote: "test"}
	model := func(ts, tb float64, n int) []float64 {
		v := ts + tb*float64(n)
		return []float64{v, v * 1.5, v * 2} // the lower sextile of these is v
	}
	for _, p := range cfg.procs {
		r.mpj = append(r.mpj, collPoint{Op: "barrier", Procs: p, Seconds: model(20e-6, 0, 0)})
		r.mpi = append(r.mpi, collPoint{Op: "barrier", Procs: p, Seconds: model(10e-6, 0, 0)})
		for _, n := range cfg.sizes {
			r.mpj = append(r.mpj, collPoint{Op: "bcast", Size: n, Procs: p, Seconds: model(30e-6*float64(p), 2e-9, n)})
			r.mpi = append(r.mpi, collPoint{Op: "bcast", Size: n, Procs: p, Seconds: model(10e-6, 1e-9, n)})
		}
	}
	rep, err := collReport(r)
	if err != nil {
		t.Fatal(err)
	}
	fit := rep.Values["fits"].(map[string]any)["mpj"].(map[string]any)["bcast"].(map[string]any)["p=4"].(map[string]any)
	if rel(fit["ts_seconds"].(float64), 120e-6) > 1e-6 || rel(fit["tb_seconds_per_byte"].(float64), 2e-9) > 1e-6 {
		t.Fatalf("fit %v", fit)
	}
	ratio := rep.Values["ratio_at_max_size"].(map[string]any)["bcast"].(map[string]any)["p=2"].(float64)
	if want := (60e-6 + 2e-9*(1<<20)) / (10e-6 + 1e-9*(1<<20)); rel(ratio, want) > 1e-9 {
		t.Fatalf("ratio %v, want %v", ratio, want)
	}
	if b := rep.Tables[0].Rows[0]; b[3].(float64) != 2 {
		t.Fatalf("barrier row %v", b)
	}
	notes := strings.Join(rep.Tables[0].Notes, "\n")
	if !strings.Contains(notes, "oversubscribed") || !strings.Contains(notes, "[4]") {
		t.Fatalf("notes lack the oversubscription:\n%s", notes)
	}
	// At size 0 Open MPI does not communicate: the ratio is n/a, and a note says why.
	bcast := rep.Tables[1]
	if bcast.Columns[3] != "p=2 mpj/MPI" || bcast.Rows[0][0] != 0 || bcast.Rows[0][3] != "n/a (size 0)" {
		t.Errorf("bcast columns %q, size-0 row %v", bcast.Columns, bcast.Rows[0])
	}
	if r := bcast.Rows[1][3].(float64); rel(r, (60e-6+2e-9)/(10e-6+1e-9)) > 1e-9 {
		t.Errorf("size-1 ratio %v", r)
	}
	if !slices.Contains(bcast.Notes, zeroSizeNote) {
		t.Errorf("bcast notes lack the size-0 note:\n%s", strings.Join(bcast.Notes, "\n"))
	}
	if len(rep.Plots) != 1 || len(rep.Plots[0].Series) != 4 {
		t.Fatalf("plots %+v", rep.Plots)
	}
}

// TestCollectivesRun runs the experiment end to end with two processes (this test
// process and the test binary started again), tiny sizes and a few repetitions, and
// the Open MPI baseline when mpicc and mpirun are installed.
func TestCollectivesRun(t *testing.T) {
	mpiErr := mpicoll.Available()
	if mpiErr != nil {
		t.Logf("Open MPI baseline skipped: %v", mpiErr)
	}
	plot := filepath.Join(t.TempDir(), "coll.png")
	out, rep := mustRun(t, "collectives", "-np", "2", "-sizes", "0,16,1024", "-reps", "3", "-warmup", "1", "-plot", plot)
	values := rep["values"].(map[string]any)
	if values["implementation"] != "tcp" {
		t.Errorf("implementation %v", values["implementation"])
	}
	series := values["mpj"].(map[string]any)
	for _, op := range collOps {
		s, ok := series[op].(map[string]any)["p=2"].(map[string]any)
		if !ok {
			t.Fatalf("no mpj figures for %s: %v", op, series[op])
		}
		want := 3
		if op == "barrier" {
			want = 1
		}
		for _, sec := range s["seconds"].([]any) {
			if x, ok := sec.(float64); !ok || !(x > 0) || math.IsInf(x, 0) {
				t.Errorf("%s: time %v", op, sec)
			}
		}
		if got := len(s["size"].([]any)); got != want {
			t.Errorf("%s: %d sizes, want %d", op, got, want)
		}
		if !strings.Contains(out, "collectives "+op) {
			t.Errorf("output lacks the %s table", op)
		}
	}
	// The raw-socket Barriers, timed beside mpj's.
	for _, op := range []string{rawFlatOp, rawDissemOp} {
		raw, ok := series[op].(map[string]any)["p=2"].(map[string]any)
		if !ok || len(raw["seconds"].([]any)) != 1 || !(raw["seconds"].([]any)[0].(float64) > 0) {
			t.Errorf("no raw-socket barrier %s: %v", op, series[op])
		}
	}
	if !strings.Contains(out, "raw dissem.") {
		t.Errorf("the barrier table lacks the raw sockets:\n%s", out)
	}
	if mpiErr == nil {
		if _, ok := values["openmpi"].(map[string]any)["allreduce"]; !ok || !strings.Contains(out, "mpj/Open MPI") {
			t.Errorf("no Open MPI baseline:\n%s", out)
		}
	} else if !strings.Contains(values["baseline"].(string), "skipped") {
		t.Errorf("baseline note %v", values["baseline"])
	}
	if st, err := os.Stat(plot); err != nil || st.Size() == 0 {
		t.Errorf("plot: %v", err)
	}
}

func TestCollectivesFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"collectives", "-np", "1"}, "at least 2 processes"},
		{[]string{"collectives", "-ops", "scan"}, `unknown collective "scan"`},
		{[]string{"collectives", "-mpi", "maybe"}, `-mpi "maybe"`},
		{[]string{"collectives", "-reps", "0"}, "-reps must be at least 1"},
	} {
		code, _, errs := runCmd(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d (want 2), stderr %q (want %q)", tc.args, code, errs, tc.want)
		}
	}
}
