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

// TestBarnesHutMPI runs barneshut built with -tags mpi as mpirun jobs of 1 to 3 ranks with
// -impl mp and requires the in-process sequential checksum (needs Open MPI):
//
//	go test -race -count=1 -tags mpi -run '^TestBarnesHutMPI$' ./apps/barneshut/
func TestBarnesHutMPI(t *testing.T) {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Fatalf("mpirun not found (apt-get install openmpi-bin libopenmpi-dev): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "barneshut")
	if out, err := exec.CommandContext(ctx, "go", "build", "-tags", "mpi", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	const bodies, steps = 601, 3
	cfg := defaultConfig(t, "-bodies", fmt.Sprint(bodies), "-steps", fmt.Sprint(steps))
	_, want := sequential(t, plummer(bodies, 2, 1), cfg)
	wantSum := fmt.Sprintf("%.17g", want.checksum)
	for _, np := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			args := []string{"-np", fmt.Sprint(np), "--oversubscribe", "--bind-to", "none"}
			if os.Geteuid() == 0 {
				args = append(args, "--allow-run-as-root")
			}
			prog := []string{"-impl", "mp", "-bodies", fmt.Sprint(bodies), "-steps", fmt.Sprint(steps), "-q", "-timeout", "2m"}
			c, err := selfexec.Run(ctx, prog, selfexec.WithProgram(bin), selfexec.WithLauncher(mpirun, args...), selfexec.WithCombinedOutput())
			if err != nil {
				t.Fatalf("mpirun %s %s %s: %v\n%s", strings.Join(args, " "), bin, strings.Join(prog, " "), err, c.Output())
			}
			r := parseResult(t, c.Output())
			if r["procs"] != fmt.Sprint(np) || r["impl"] != "mp" {
				t.Errorf("ran as %v, want %d ranks over mp", r, np)
			}
			if r["checksum"] != wantSum {
				t.Errorf("checksum %s, sequentially %s", r["checksum"], wantSum)
			}
		})
	}
}
