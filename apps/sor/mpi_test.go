//go:build mpi

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/selfexec"
)

// TestSORMPI runs sor built with -tags mpi as mpirun jobs of 1 to 4 ranks with -impl mp and
// requires the sequential computation's bits (needs Open MPI):
//
//	go test -race -count=1 -tags mpi -run '^TestSORMPI$' ./apps/sor/
func TestSORMPI(t *testing.T) {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatalf("mpirun not found (apt-get install openmpi-bin libopenmpi-dev): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "sor")
	if out, err := exec.CommandContext(ctx, "go", "build", "-tags", "mpi", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	const n, iters = 64, 20
	wantIters, wantChange, wantSum := want(n, iters)
	for _, np := range []int{1, 2, 3, 4} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			args := []string{"-np", fmt.Sprint(np), "--oversubscribe", "--bind-to", "none"}
			if os.Geteuid() == 0 {
				args = append(args, "--allow-run-as-root")
			}
			prog := []string{"-impl", "mp", "-n", fmt.Sprint(n), "-iters", fmt.Sprint(iters), "-verify", "-timeout", "2m"}
			if np == 3 {
				prog = append(prog, "-async")
			}
			c, err := selfexec.Run(ctx, prog, selfexec.WithProgram(bin), selfexec.WithLauncher(mpirun, args...), selfexec.WithCombinedOutput())
			out := c.Output()
			if err != nil {
				t.Fatalf("mpirun %s %s %s: %v\n%s", strings.Join(args, " "), bin, strings.Join(prog, " "), err, out)
			}
			r := parseResult(t, string(out))
			if r["procs"] != fmt.Sprint(np) || r["impl"] != "mp" {
				t.Errorf("ran as %v, want %d ranks over mp", r, np)
			}
			if r["iters"] != wantIters || r["change"] != wantChange || r["checksum"] != wantSum {
				t.Errorf("iters %s change %s checksum %s; sequentially %s %s %s",
					r["iters"], r["change"], r["checksum"], wantIters, wantChange, wantSum)
			}
		})
	}
}
