package main

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"

	"github.com/ibisgo/ibis/internal/apptest"
	"github.com/ibisgo/ibis/internal/figure"
	"github.com/ibisgo/ibis/internal/tlsconf"
)

// TestMain runs sor's main when the tests start this binary as sor (apptest): -np starts
// more of it (os.Executable), all with the race detector when the tests have it.
func TestMain(m *testing.M) {
	if os.Getenv(apptest.EnvAsMain) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// sor runs this binary as sor with args and returns stdout, stderr and the exit code.
func sor(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return apptest.Run(t, nil, args...)
}

// sorEnv is sor with env added to the environment (whose IBIS_ variables are dropped).
func sorEnv(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return apptest.Run(t, env, args...)
}

// result parses the sor-result line of stdout.
func parseResult(t *testing.T, stdout string) map[string]string {
	t.Helper()
	for _, line := range strings.Split(stdout, "\n") {
		if rest, ok := strings.CutPrefix(line, "sor-result "); ok {
			kv := map[string]string{}
			for _, f := range strings.Fields(rest) {
				k, v, _ := strings.Cut(f, "=")
				kv[k] = v
			}
			return kv
		}
	}
	t.Fatalf("no sor-result line in:\n%s", stdout)
	return nil
}

// want is the sequential computation's outcome, as sor prints it.
func want(n, iters int) (nIters, change, checksum string) {
	b, k, c := solveSeq(n, iters)
	return fmt.Sprint(k), fmt.Sprintf("%.17g", c), fmt.Sprintf("%.17g", b.checksum(0))
}

// TestSameBitsAnyP: the same checksum, change and iterations, bit for bit, on 1 to 4
// processes (3 and 4 do not divide 50), over tcp and nio, with and without -async.
func TestSameBitsAnyP(t *testing.T) {
	const n, iters = 50, 20
	wantIters, wantChange, wantSum := want(n, iters)
	for _, impl := range []string{"tcp", "nio"} {
		for _, p := range []int{1, 2, 3, 4} {
			for _, async := range []bool{false, true} {
				if async && p < 3 {
					continue // one and two processes have no inner rows worth overlapping
				}
				t.Run(fmt.Sprintf("%s/P=%d/async=%t", impl, p, async), func(t *testing.T) {
					stdout, stderr, code := sor(t, "-np", fmt.Sprint(p), "-n", fmt.Sprint(n), "-iters", fmt.Sprint(iters),
						"-impl", impl, fmt.Sprintf("-async=%t", async), "-timeout", "2m")
					if code != 0 {
						t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
					}
					r := parseResult(t, stdout)
					if r["procs"] != fmt.Sprint(p) || r["impl"] != impl || r["n"] != fmt.Sprint(n) {
						t.Errorf("ran as %v, want %d processes over %s", r, p, impl)
					}
					if r["iters"] != wantIters || r["change"] != wantChange || r["checksum"] != wantSum {
						t.Errorf("iters %s change %s checksum %s; sequentially %s %s %s",
							r["iters"], r["change"], r["checksum"], wantIters, wantChange, wantSum)
					}
				})
			}
		}
	}
}

// For N = 50 the computation converges after 592 iterations. Found with solveSeq and the
// C loop of testdata/sor.c (same count, change and checksum); a change to either the
// kernel or the parameters shows here.
const (
	convergeN        = 50
	convergeIters    = 592
	convergeChange   = "8.6974750217017061e-05"
	convergeChecksum = "17869.586928982535"
)

func TestConvergenceSequential(t *testing.T) {
	iters, change, sum := want(convergeN, 0)
	if iters != fmt.Sprint(convergeIters) || change != convergeChange || sum != convergeChecksum {
		t.Errorf("N=%d: %s iterations, change %s, checksum %s; want %d, %s, %s",
			convergeN, iters, change, sum, convergeIters, convergeChange, convergeChecksum)
	}
}

// TestConvergenceVerify: a pool that runs until convergence stops at the same iteration, and
// -verify finds its gathered grid bitwise equal to the sequential one.
func TestConvergenceVerify(t *testing.T) {
	stdout, stderr, code := sor(t, "-np", "3", "-n", fmt.Sprint(convergeN), "-verify", "-async", "-impl", "nio", "-timeout", "2m")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r := parseResult(t, stdout)
	if r["iters"] != fmt.Sprint(convergeIters) || r["change"] != convergeChange || r["checksum"] != convergeChecksum {
		t.Errorf("iters %s change %s checksum %s; want %d %s %s", r["iters"], r["change"], r["checksum"],
			convergeIters, convergeChange, convergeChecksum)
	}
	if !strings.Contains(stdout, "verified: ") {
		t.Errorf("no verification in:\n%s", stdout)
	}
}

// TestImage: -image writes a PNG heat map of the whole grid, borders included, and says so.
func TestImage(t *testing.T) {
	file := filepath.Join(t.TempDir(), "heat.png")
	stdout, stderr, code := sor(t, "-np", "2", "-n", "30", "-iters", "40", "-image", file, "-verify", "-timeout", "2m")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "sor: wrote "+file) {
		t.Errorf("stderr does not name %s:\n%s", file, stderr)
	}
}

// TestHeatMap: the heat map has labelled axes and a colour bar with a labelled scale, and
// its cells are where the axes say (row 0 at the bottom, column 0 at the left).
func TestHeatMap(t *testing.T) {
	const n = 6
	w := n + 2
	grid := make([]float64, w*w)
	for k := range grid {
		grid[k] = float64(k) // row i, column j holds i*w+j
	}
	p, scale := heatMap(grid, n, 3)
	for _, a := range []struct {
		name string
		axis *plot.Axis
	}{{"x", &p.X}, {"y", &p.Y}, {"colour bar", &figure.ColorBar(scale, "v").Y}} {
		if got := figure.Labels(a.axis); len(got) < 2 {
			t.Errorf("%s axis labels %q, want several", a.name, got)
		}
	}
	if scale.Min() != 0 || scale.Max() != float64(w*w-1) {
		t.Errorf("scale from %g to %g", scale.Min(), scale.Max())
	}
	img := raster(grid, w, scale)
	side := img.Bounds().Dx()
	if side < rasterMinPix || side%w != 0 {
		t.Fatalf("raster of %d pixels for %d cells a side", side, w)
	}
	for _, c := range []struct{ x, y, cell int }{
		{0, side - 1, 0},            // bottom left: row 0, column 0
		{side - 1, side - 1, w - 1}, // bottom right: row 0, column w-1
		{0, 0, (w - 1) * w},         // top left: row w-1, column 0
	} {
		if got, want := img.RGBAAt(c.x, c.y), scale.RGBA(grid[c.cell]); got != want {
			t.Errorf("pixel (%d, %d) %v, want cell %d's %v", c.x, c.y, got, c.cell, want)
		}
	}
	big := make([]float64, 2050*2050)
	if side := raster(big, 2050, scale).Bounds().Dx(); side > rasterMaxPix {
		t.Errorf("raster of %d pixels for a 2050 grid", side)
	}
	if err := writeImage(filepath.Join(t.TempDir(), "flat.png"), make([]float64, w*w), n, 0); err != nil {
		t.Errorf("a grid of one value: %v", err)
	}
}

// TestBadFlags: usage errors end with status 2 and say what is wrong, before any process
// starts.
func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "0"}, "-n 0: the interior size must be at least 1"},
		{[]string{"-n", "-5"}, "-n -5"},
		{[]string{"-iters", "-1"}, "-iters -1"},
		{[]string{"-np", "60", "-n", "50"}, "-np 60 is more than the 50 rows of -n 50"},
		{[]string{"-np", "-1"}, "-np -1"},
		{[]string{"-np", "2", "-impl", "mp"}, "mpirun"},
		{[]string{"-np", "2", "-registry", "localhost:1"}, "-registry with -np"},
		{[]string{"-image", "heat.jpg"}, "must end in .png"},
		{[]string{"-image", "/nonexistent-ibis/heat.png"}, "its folder /nonexistent-ibis is not there"},
		{[]string{"-n", "10", "extra"}, `unexpected argument "extra"`},
		{[]string{"-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"-n", "ten"}, `invalid value "ten" for flag -n`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("sor %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr.String(), exitUsage, tc.want)
		}
	}
}

func TestPartition(t *testing.T) {
	for _, n := range []int{1, 7, 50, 64, 100} {
		for p := 1; p <= min(n, 9); p++ {
			next, smallest, largest := 1, n, 0
			for r := range p {
				lo, rows := partition(n, p, r)
				if lo != next {
					t.Fatalf("n=%d p=%d rank %d starts at %d, want %d", n, p, r, lo, next)
				}
				next += rows
				smallest, largest = min(smallest, rows), max(largest, rows)
			}
			if next != n+1 || largest-smallest > 1 || smallest < 1 {
				t.Errorf("n=%d p=%d: rows end at %d, sizes %d..%d", n, p, next-1, smallest, largest)
			}
		}
	}
}

// TestKernelSplitSameBits: updating a colour in two blocks of rows (with the ghost rows
// copied, as the exchange does) gives the bits of one block, in-process.
func TestKernelSplitSameBits(t *testing.T) {
	const n = 9
	whole := newBlock(n, 1, 0)
	parts := []*block{newBlock(n, 2, 0), newBlock(n, 2, 1)}
	pr := newParams(n)
	for range 7 {
		for c := range 2 {
			copy(parts[0].row(parts[0].rows+1), parts[1].row(1))
			copy(parts[1].row(0), parts[0].row(parts[0].rows))
			d := whole.sweep(1, n, c, pr.omega)
			d0, d1 := parts[0].sweep(1, parts[0].rows, c, pr.omega), parts[1].sweep(1, parts[1].rows, c, pr.omega)
			if math.Float64bits(d) != math.Float64bits(max(d0, d1)) {
				t.Fatalf("change %v, split %v and %v", d, d0, d1)
			}
		}
	}
	if a, b := whole.checksum(0), parts[1].checksum(parts[0].checksum(0)); math.Float64bits(a) != math.Float64bits(b) {
		t.Errorf("checksum %.17g, split %.17g", a, b)
	}
}

// TestCKernelSameBits: the C baseline (testdata/sor.c) computes the same bits, when gcc is
// there. (At N = 50 glibc's cos and Go's math.Cos agree; at some N they differ in the last
// bit, and so does omega: see docs/SOR.md.)
func TestCKernelSameBits(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	bin := filepath.Join(t.TempDir(), "sor-c")
	if out, err := exec.Command(gcc, "-O2", "-ffp-contract=off", "-o", bin, "testdata/sor.c", "-lm").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	for _, order := range [][]string{nil, {"wavefront"}} {
		for _, iters := range []int{20, 0} {
			out, err := exec.Command(bin, append([]string{"50", fmt.Sprint(iters)}, order...)...).Output()
			if err != nil {
				t.Fatalf("sor-c %v: %v", order, err)
			}
			k, c, s := want(50, iters)
			w := fmt.Sprintf("iters=%s change=%s checksum=%s ", k, c, s)
			if !strings.Contains(string(out), w) {
				t.Errorf("C %v: %s; Go: %s", order, out, w)
			}
		}
	}
}

// alone is the exchanger of a block that has no neighbours (its ghost rows are borders).
type alone struct{}

func (alone) start() error { return nil }
func (alone) wait() error  { return nil }

// TestIterateSameBits: the iteration's row order (wavefront, sync and async) gives the bits
// of two whole-grid sweeps, for blocks of every small height (1, 2, 3 rows are special cases).
func TestIterateSameBits(t *testing.T) {
	for n := 1; n <= 9; n++ {
		for _, async := range []bool{false, true} {
			ref, b := newBlock(n, 1, 0), newBlock(n, 1, 0)
			pr := newParams(n)
			for it := range 25 {
				d0 := ref.sweep(1, n, 0, pr.omega)
				want := max(d0, ref.sweep(1, n, 1, pr.omega))
				got, err := b.iterate(pr.omega, async, alone{})
				if err != nil {
					t.Fatal(err)
				}
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("n=%d async=%t iteration %d: change %v, want %v", n, async, it, got, want)
				}
			}
			for k := range ref.g {
				if math.Float64bits(ref.g[k]) != math.Float64bits(b.g[k]) {
					t.Fatalf("n=%d async=%t: cell %d is %v, want %v", n, async, k, b.g[k], ref.g[k])
				}
			}
		}
	}
}

// TestPoolSecretFromEnvironment: a pool whose processes get its secret in a file named by
// IBIS_POOL_SECRET_FILE, and then its certificates in IBIS_TLS_* (as on a cluster), forms
// and computes: -np's registry and every data connection check them; a secret file that
// cannot be read is a clear error.
func TestPoolSecretFromEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, impl := range []string{"tcp", "nio"} {
		stdout, stderr, code := sorEnv(t, []string{"IBIS_POOL_SECRET_FILE=" + path}, "-np", "3", "-n", "30", "-iters", "10", "-impl", impl, "-q")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", impl, code, stdout, stderr)
		}
		k, c, sum := want(30, 10)
		if r := parseResult(t, stdout); r["iters"] != k || r["change"] != c || r["checksum"] != sum {
			t.Errorf("%s: %v, want %s %s %s", impl, r, k, c, sum)
		}
	}
	// And with TLS too (tcp: nio refuses TLS).
	files, err := tlsconf.Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"IBIS_POOL_SECRET_FILE=" + path, "IBIS_TLS_CERT=" + files.Cert, "IBIS_TLS_KEY=" + files.Key, "IBIS_TLS_CA=" + files.CA}
	if stdout, stderr, code := sorEnv(t, env, "-np", "2", "-n", "30", "-iters", "10", "-impl", "tcp", "-q"); code != 0 {
		t.Fatalf("secret and TLS: exit %d\n%s%s", code, stdout, stderr)
	}
	_, stderr, code := sorEnv(t, []string{"IBIS_POOL_SECRET_FILE=" + path + ".missing"}, "-np", "2", "-n", "10", "-iters", "1", "-q")
	if code == 0 || !strings.Contains(stderr, "secret") {
		t.Errorf("a missing secret file: exit %d, %s", code, stderr)
	}
}
