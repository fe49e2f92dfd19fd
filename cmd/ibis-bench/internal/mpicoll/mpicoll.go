// Package mpicoll is the Open MPI baseline of `ibis-bench collectives`: a small C
// program (csrc/mpicoll.c, embedded) that times MPI's own collectives the way
// ibis-bench times mpj's, built with mpicc and run under mpirun over Open MPI's TCP
// transport on 127.0.0.1, and the parser of what it prints.
package mpicoll

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

//go:embed csrc/mpicoll.c
var source []byte

// Source returns the C program's text.
func Source() []byte { return bytes.Clone(source) }

// ErrNoMPI is returned by Available, Build and Run when mpicc or mpirun is not on the PATH.
var ErrNoMPI = errors.New("mpicoll: mpicc or mpirun not found on the PATH")

// Available reports whether mpicc and mpirun are on the PATH (nil) or not (ErrNoMPI).
func Available() error {
	for _, tool := range []string{"mpicc", "mpirun"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%w (%s: %v)", ErrNoMPI, tool, err)
		}
	}
	return nil
}

// Build compiles the program with mpicc into dir and returns the binary's path.
func Build(ctx context.Context, dir string) (string, error) {
	if err := Available(); err != nil {
		return "", err
	}
	src := filepath.Join(dir, "mpicoll.c")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "mpicoll")
	out, err := exec.CommandContext(ctx, "mpicc", "-O2", "-o", bin, src).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("mpicc: %v\n%s", err, out)
	}
	return bin, nil
}

// Settings are one run of the program.
type Settings struct {
	// Procs is the number of MPI processes (mpirun -np).
	Procs int
	// Reps and Warmup are the timed and untimed calls per operation and size.
	Reps, Warmup int
	// Ops are the operations (barrier, bcast, reduce, allreduce, allgather,
	// alltoall, gather, scatter) and Sizes the message sizes in bytes.
	Ops   []string
	Sizes []int
	// ExtraArgs are more mpirun options, before the program.
	ExtraArgs []string
	// Stderr receives mpirun's standard error (nil: kept for the error message only).
	Stderr io.Writer
}

// Args returns mpirun's command line (without "mpirun") for bin: Open MPI's TCP
// transport on the loopback interface, and as root --allow-run-as-root; with more
// processes than CPUs --oversubscribe (which also makes Open MPI yield when idle).
func Args(bin string, s Settings, root bool, cpus int) []string {
	args := []string{"-np", strconv.Itoa(s.Procs), "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "lo"}
	if root {
		args = append(args, "--allow-run-as-root")
	}
	if root || s.Procs > cpus {
		args = append(args, "--oversubscribe")
	}
	args = append(args, s.ExtraArgs...)
	sizes := make([]string, len(s.Sizes))
	for i, n := range s.Sizes {
		sizes[i] = strconv.Itoa(n)
	}
	return append(args, bin, strconv.Itoa(s.Reps), strconv.Itoa(s.Warmup), strings.Join(s.Ops, ","), strings.Join(sizes, ","))
}

// Result is one operation at one size: the per-repetition maximum over the ranks,
// in seconds.
type Result struct {
	Op      string
	Size    int
	Procs   int
	Seconds []float64
}

// Run runs bin under mpirun with args (see Args) and parses its output.
func Run(ctx context.Context, args []string, stderr io.Writer) ([]Result, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "mpirun", args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if stderr != nil {
		cmd.Stderr = io.MultiWriter(&errb, stderr)
	}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("mpirun %s: %v\n%s", strings.Join(args, " "), err, tail(errb.String(), 2000))
	}
	return Parse(bytes.NewReader(out))
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// Parse reads the program's "T op size p seconds..." lines; other lines are ignored.
func Parse(r io.Reader) ([]Result, error) {
	var out []Result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "T" {
			continue
		}
		if len(f) < 5 {
			return nil, fmt.Errorf("mpicoll: short line %q", sc.Text())
		}
		res := Result{Op: f[1]}
		var err error
		if res.Size, err = strconv.Atoi(f[2]); err != nil {
			return nil, fmt.Errorf("mpicoll: size in %q: %w", sc.Text(), err)
		}
		if res.Procs, err = strconv.Atoi(f[3]); err != nil {
			return nil, fmt.Errorf("mpicoll: process count in %q: %w", sc.Text(), err)
		}
		for _, v := range f[4:] {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("mpicoll: time in %q: %w", sc.Text(), err)
			}
			res.Seconds = append(res.Seconds, x)
		}
		out = append(out, res)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("mpicoll: no results in the output")
	}
	return out, nil
}
