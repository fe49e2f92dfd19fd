//go:build mpi

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/apptest"
	"github.com/ibisgo/ibis/internal/selfexec"
)

// TestDivideAndConquerMPI runs the divide-and-conquer applications (fib, nqueens, uts),
// built with -tags mpi, as mpirun jobs over -impl mp with every steal algorithm, and
// requires their checked results from a report of every rank (needs Open MPI):
//
//	go test -race -count=1 -tags mpi -run '^TestDivideAndConquerMPI$' ./apps/fib/
func TestDivideAndConquerMPI(t *testing.T) {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatalf("mpirun not found (apt-get install openmpi-bin libopenmpi-dev): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dir := t.TempDir()
	for _, app := range []string{"fib", "nqueens", "uts"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-tags", "mpi", "-o", filepath.Join(dir, app), "../"+app)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", app, err, out)
		}
	}
	for _, tc := range []struct {
		app  string
		np   int
		algo string
		args []string
	}{
		{"fib", 1, "rs", []string{"-n", "25"}},
		{"fib", 2, "rs", []string{"-n", "27"}},
		{"fib", 3, "crs", []string{"-n", "27", "-sites", "2"}},
		{"fib", 3, "trs", []string{"-n", "27"}},
		{"nqueens", 3, "trs", []string{"-n", "11"}},
		{"uts", 2, "crs", []string{"-tree", "T1", "-sites", "2"}},
	} {
		t.Run(fmt.Sprintf("%s/np=%d/%s", tc.app, tc.np, tc.algo), func(t *testing.T) {
			args := []string{"-np", fmt.Sprint(tc.np), "--oversubscribe", "--bind-to", "none"}
			if os.Geteuid() == 0 {
				args = append(args, "--allow-run-as-root")
			}
			bin := filepath.Join(dir, tc.app)
			prog := append([]string{"-impl", "mp", "-steal", tc.algo, "-json", "-timeout", "3m"}, tc.args...)
			c, err := selfexec.Run(ctx, prog, selfexec.WithProgram(bin), selfexec.WithLauncher(mpirun, args...))
			out := c.Stdout()
			if err != nil {
				t.Fatalf("mpirun %s %s %s: %v\n%s%s", strings.Join(args, " "), bin, strings.Join(prog, " "), err, out, c.Stderr())
			}
			var o apptest.Output
			if err := json.Unmarshal([]byte(out), &o); err != nil {
				t.Fatalf("not one JSON object: %v\n%s", err, out)
			}
			if o.Impl != "mp" || o.Processes != tc.np || o.Statistics.Algorithm != tc.algo {
				t.Errorf("ran on %d ranks over %s with %s, want %d over mp with %s; its log:\n%s",
					o.Processes, o.Impl, o.Statistics.Algorithm, tc.np, tc.algo, c.Stderr())
			}
		})
	}
}
