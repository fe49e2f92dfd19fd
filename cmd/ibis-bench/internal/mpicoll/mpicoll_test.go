package mpicoll

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	in := "noise\nT bcast 1024 3 1.5e-06 2e-06\nT barrier 0 3 1e-05\n"
	got, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Op != "bcast" || got[0].Size != 1024 || got[0].Procs != 3 ||
		!slices.Equal(got[0].Seconds, []float64{1.5e-6, 2e-6}) || got[1].Op != "barrier" {
		t.Fatalf("parsed %+v", got)
	}
	for _, bad := range []string{"", "T bcast x 2 1\n", "T bcast 1 2\n", "T bcast 1 2 zz\n"} {
		if _, err := Parse(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestArgs(t *testing.T) {
	a := Args("/x/mpicoll", Settings{Procs: 4, Reps: 5, Warmup: 1, Ops: []string{"bcast", "gather"}, Sizes: []int{0, 4}}, true, 2)
	s := strings.Join(a, " ")
	for _, want := range []string{"-np 4", "--mca btl tcp,self", "--allow-run-as-root", "--oversubscribe", "/x/mpicoll 5 1 bcast,gather 0,4"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
	if s := strings.Join(Args("b", Settings{Procs: 2, Reps: 1}, false, 2), " "); strings.Contains(s, "root") || strings.Contains(s, "oversub") {
		t.Errorf("%q", s)
	}
}

// TestBuildRun builds the C program and runs it with two processes; it is skipped
// when mpicc or mpirun is missing.
func TestBuildRun(t *testing.T) {
	if err := Available(); err != nil {
		t.Skipf("no Open MPI baseline: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bin, err := Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ops := []string{"barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", "gather", "scatter"}
	args := Args(bin, Settings{Procs: 2, Reps: 3, Warmup: 1, Ops: ops, Sizes: []int{0, 64}}, os.Geteuid() == 0, 2)
	res, err := Run(ctx, args, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1+2*(len(ops)-1) {
		t.Fatalf("%d results: %+v", len(res), res)
	}
	for _, r := range res {
		if r.Procs != 2 || len(r.Seconds) != 3 {
			t.Errorf("result %+v", r)
		}
	}
	if _, err := Run(ctx, Args(bin, Settings{Procs: 2, Reps: 1, Ops: []string{"nosuch"}, Sizes: []int{0}}, os.Geteuid() == 0, 2), nil); err == nil || errors.Is(err, ErrNoMPI) {
		t.Fatalf("unknown operation: %v", err)
	}
}
