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

	"gonum.org/v1/plot"

	"github.com/ibisgo/ibis/internal/apptest"
	"github.com/ibisgo/ibis/internal/figure"
)

// TestMain runs barneshut's main when the tests start this binary as barneshut
// (apptest): -np starts more of it, all with the race detector when the tests have it.
func TestMain(m *testing.M) {
	if os.Getenv(apptest.EnvAsMain) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// barneshut runs this binary as barneshut with args and returns stdout, stderr and the exit
// code.
func barneshut(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return apptest.Run(t, nil, args...)
}

// parseResult parses the barneshut-result line of stdout.
func parseResult(t *testing.T, stdout string) map[string]string {
	t.Helper()
	for _, line := range strings.Split(stdout, "\n") {
		if rest, ok := strings.CutPrefix(line, "barneshut-result "); ok {
			kv := map[string]string{}
			for _, f := range strings.Fields(rest) {
				k, v, _ := strings.Cut(f, "=")
				kv[k] = v
			}
			return kv
		}
	}
	t.Fatalf("no barneshut-result line in:\n%s", stdout)
	return nil
}

// sequential runs cfg in this process as a world of one and returns the final system and
// result.
func sequential(t *testing.T, s *system, cfg *config) (*system, result) {
	t.Helper()
	res, err := runSteps(context.Background(), local{}, s, cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, res
}

func defaultConfig(t *testing.T, args ...string) *config {
	t.Helper()
	cfg, err := parseArgs(args, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestSameChecksumAnyP: the same final checksum, bit for bit, as the in-process sequential
// run, on 1, 2 and 3 real processes over tcp and nio (3 does not divide the bodies).
func TestSameChecksumAnyP(t *testing.T) {
	const bodies, steps = 601, 3
	cfg := defaultConfig(t, "-bodies", fmt.Sprint(bodies), "-steps", fmt.Sprint(steps))
	_, want := sequential(t, plummer(bodies, 2, 1), cfg)
	wantSum := fmt.Sprintf("%.17g", want.checksum)
	for _, impl := range []string{"tcp", "nio"} {
		for _, p := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/P=%d", impl, p), func(t *testing.T) {
				t.Parallel()
				stdout, stderr, code := barneshut(t, "-np", fmt.Sprint(p), "-bodies", fmt.Sprint(bodies),
					"-steps", fmt.Sprint(steps), "-impl", impl, "-q", "-timeout", "2m")
				if code != 0 {
					t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
				}
				r := parseResult(t, stdout)
				if r["procs"] != fmt.Sprint(p) || r["impl"] != impl || r["bodies"] != fmt.Sprint(bodies) {
					t.Errorf("ran as %v, want %d processes over %s", r, p, impl)
				}
				if r["checksum"] != wantSum {
					t.Errorf("checksum %s, sequentially %s", r["checksum"], wantSum)
				}
			})
		}
	}
}

// TestAccuracy: at theta 0.5 the tree's accelerations of a few thousand bodies are within the
// issue's bounds of direct summation (median < 5e-3, 99th percentile < 3e-2), for one sphere
// and for the two colliding spheres.
func TestAccuracy(t *testing.T) {
	for _, spheres := range []int{1, 2} {
		s := plummer(3000, spheres, 7)
		cfg := defaultConfig(t, "-steps", "0")
		sequential(t, s, cfg)
		all := make([]int, s.n())
		for i := range all {
			all[i] = i
		}
		a := checkAccuracy(s, cfg.p.eps, all)
		t.Logf("%d sphere(s): median %.3g, 99th percentile %.3g, rms %.3g", spheres, a.median, a.p99, a.rms)
		if a.median >= 5e-3 || a.p99 >= 3e-2 {
			t.Errorf("%d sphere(s): median %.3g (want < 5e-3), 99th percentile %.3g (want < 3e-2)", spheres, a.median, a.p99)
		}
	}
}

// TestThetaZeroIsDirect: with theta 0 the tree opens every cell, so the walk is direct
// summation in another order.
func TestThetaZeroIsDirect(t *testing.T) {
	s := plummer(300, 2, 3)
	sequential(t, s, defaultConfig(t, "-steps", "0", "-theta", "0", "-leaf", "3"))
	a := checkAccuracy(s, 0.025, sample(s.n()))
	if a.p99 > 1e-12 {
		t.Errorf("theta 0: 99th percentile relative error %.3g, want rounding only", a.p99)
	}
	for _, c := range s.cost {
		if c != int64(s.n()-1) {
			t.Fatalf("theta 0: a body had %d interactions, want %d", c, s.n()-1)
		}
	}
}

// TestEnergyDrift: over a short run the total energy changes little.
func TestEnergyDrift(t *testing.T) {
	for _, spheres := range []int{1, 2} {
		_, res := sequential(t, plummer(1500, spheres, 5), defaultConfig(t, "-steps", "20"))
		t.Logf("%d sphere(s): energy %.9g -> %.9g, drift %.3g", spheres, res.e0, res.e1, res.drift())
		if math.Abs(res.drift()) > 2e-3 {
			t.Errorf("%d sphere(s): relative energy drift %.3g over 20 steps, want below 2e-3", spheres, res.drift())
		}
	}
}

// TestPlummerUnits: one sphere has mass 1 and, in standard units, energy near -1/4.
func TestPlummerUnits(t *testing.T) {
	s := plummer(4000, 1, 11)
	var m float64
	for _, x := range s.mass {
		m += x
	}
	if math.Abs(m-1) > 1e-12 {
		t.Errorf("total mass %.17g, want 1", m)
	}
	sequential(t, s, defaultConfig(t, "-steps", "0"))
	if e := s.energy(); e > -0.2 || e < -0.3 {
		t.Errorf("energy %.6g, want about -0.25 (softened)", e)
	}
}

func TestPartition(t *testing.T) {
	order := []int32{4, 3, 2, 1, 0, 5, 6, 7, 8, 9}
	cost := []int64{1, 1, 1, 1, 100, 1, 1, 1, 1, 1}
	for np := 1; np <= 10; np++ {
		b := partition(order, cost, np)
		if b[0] != 0 || b[np] != 10 {
			t.Fatalf("np=%d: bounds %v", np, b)
		}
		for r := range np {
			if b[r+1] <= b[r] {
				t.Fatalf("np=%d: block %d empty in %v", np, r, b)
			}
		}
	}
	// Body 4, first in Morton order, costs more than all the others: it is a block alone.
	if b := partition(order, cost, 2); b[1] != 1 {
		t.Errorf("two blocks of cost: bounds %v", b)
	}
}

// TestOutInputRoundTrip: -input reads back what -out wrote, bit for bit, and continuing from
// it gives what running on gives.
func TestOutInputRoundTrip(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.atos"), filepath.Join(dir, "b.atos")
	stdout, stderr, code := barneshut(t, "-bodies", "300", "-steps", "2", "-out", a, "-q")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s, err := readAtosFile(a)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := sequential(t, plummer(300, 2, 1), defaultConfig(t, "-steps", "2"))
	for i := range ref.pos {
		if ref.pos[i] != s.pos[i] || ref.vel[i] != s.vel[i] || ref.mass[i] != s.mass[i] {
			t.Fatalf("body %d: read back %v %v %v, ran to %v %v %v", i, s.mass[i], s.pos[i], s.vel[i], ref.mass[i], ref.pos[i], ref.vel[i])
		}
	}
	if s.time != 0.05 {
		t.Errorf("time %v, want 0.05", s.time)
	}
	stdout, stderr, code = barneshut(t, "-np", "2", "-input", a, "-steps", "1", "-out", b, "-q")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	_, res := sequential(t, s, defaultConfig(t, "-steps", "1"))
	if got, want := parseResult(t, stdout)["checksum"], fmt.Sprintf("%.17g", res.checksum); got != want {
		t.Errorf("-input, one more step on 2 processes: checksum %s, in-process %s", got, want)
	}
	var buf bytes.Buffer
	if err := writeAtos(&buf, s); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(b); err != nil || !bytes.Equal(got, buf.Bytes()) {
		t.Errorf("-out after -input differs from the in-process state (%v)", err)
	}
}

// TestMalformedInput: every malformed file gets an error naming its line.
func TestMalformedInput(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "line 1: the file ends where the number of bodies"},
		{"x\n", "line 1: the number of bodies is \"x\""},
		{"2\n2\n0\n", "line 2: the dimension is \"2\""},
		{"2 3 0\n1\n1\n0 0 0\n0 0\n", "line 5: the file ends where the position of body 1 (z)"},
		{"2\n3\n0\n1 1\n0 0 nan\n0 0 0\n", "line 5: the position of body 0 (z) is \"nan\""},
		{"2\n3\n0\n-1 1\n0 0 0 1 1 1\n0 0 0 0 0 0\n", "line 4: the mass of body 0 is -1"},
		{"2\n3\n0\n1 1\n0 0 0 1 1 1\n0 0 0 0 0 0\n\n7\n", "line 8: \"7\" after the 2 bodies"},
		{"2\n3\n0\n1 1\n0 0 0 1 1 1\n0 0 1e999 0 0 0\n", "line 6: the velocity of body 0 (z)"},
		{"2\n3\n0\n1 1\n1e308 0 0\n-1e308 1 1\n0 0 0\n0 0 0\n", "line 5: the position of body 0 (x) is \"1e308\", beyond +-1e+100"},
		{"2\n3\n0\n1e101 1\n0 0 0 1 1 1\n0 0 0 0 0 0\n", "line 4: the mass of body 0 is \"1e101\", beyond"},
		{"999999999999\n3\n0\n", "line 1: the number of bodies is"},
		{"1\n3\n0\n1\n0 0 0\n0 0 0\n", "line 1: the number of bodies is 1: want 2 to"},
		{"0 3 0\n", "line 1: the number of bodies is 0: want 2 to"},
	} {
		_, err := readAtos(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.in, err, c.want)
		}
	}
	// And through the program: the error names the file and the line, with exit status 1.
	bad := filepath.Join(t.TempDir(), "bad.atos")
	if err := os.WriteFile(bad, []byte("2\n3\n0\n1\n1\n0 0 0\n1 1 oops\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := barneshut(t, "-input", bad, "-q")
	if code != exitFailure || !strings.Contains(stderr, bad+": line 7: the position of body 1 (z) is \"oops\"") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func FuzzReadAtos(f *testing.F) {
	var buf bytes.Buffer
	if err := writeAtos(&buf, plummer(3, 1, 1)); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.String())
	f.Add("1 3 0 1 0 0 0 0 0 0")
	f.Add("2\n3\n0\n1\n")
	f.Add("100000000 3 0")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := readAtos(strings.NewReader(in))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error %q does not start with its line", err)
			}
			return
		}
		var out bytes.Buffer
		if err := writeAtos(&out, s); err != nil {
			t.Fatal(err)
		}
		s2, err := readAtos(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("reading what was written: %v", err)
		}
		var again bytes.Buffer
		if err := writeAtos(&again, s2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), again.Bytes()) {
			t.Fatal("write, read, write changed the file")
		}
	})
}

// TestImage: -image writes the final picture, -image-every a numbered series from step 0,
// and each file written is named on stderr.
func TestImage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bh.png")
	stdout, stderr, code := barneshut(t, "-bodies", "500", "-steps", "4", "-image", path, "-image-every", "2")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, p := range []string{framePath(path, 0), framePath(path, 2), framePath(path, 4), path} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = png.Decode(f)
		_ = f.Close()
		if err != nil {
			t.Errorf("%s: %v", p, err)
		}
		if !strings.Contains(stderr, "barneshut: wrote "+p+" (step ") {
			t.Errorf("stderr does not name %s:\n%s", p, stderr)
		}
	}
	if n := strings.Count(stderr, "barneshut: wrote "); n != 4 {
		t.Errorf("%d files named on stderr, want 4:\n%s", n, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 4 {
		t.Errorf("%d files written, want 4", len(entries))
	}
	if n := strings.Count(stderr, "barneshut: step "); n != 4 {
		t.Errorf("%d progress lines on stderr, want 4:\n%s", n, stderr)
	}
}

// TestFramePlot: a picture has labelled x and y axes and says its step and simulated time.
func TestFramePlot(t *testing.T) {
	s := plummer(300, 2, 1)
	s.time = 0.75
	p := framePlot(s, newView(s), frame{step: 30, steps: 40, time: s.time})
	for _, a := range []struct {
		name string
		axis *plot.Axis
	}{{"x", &p.X}, {"y", &p.Y}} {
		if got := figure.Labels(a.axis); len(got) < 2 {
			t.Errorf("%s axis labels %q, want several", a.name, got)
		}
	}
	if !strings.Contains(p.Title.Text, "step 30 of 40") || !strings.Contains(p.Title.Text, "t = 0.75") {
		t.Errorf("title %q lacks the step or the time", p.Title.Text)
	}
}

// TestOneBodyRefused: -bodies 1 and an input file of one body are refused alike: usage
// status for the flag, failure for the file, and the same reason in both messages.
func TestOneBodyRefused(t *testing.T) {
	one := filepath.Join(t.TempDir(), "one.atos")
	if err := os.WriteFile(one, []byte("1\n3\n0\n1\n0 0 0\n0 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("want 2 to %d bodies (one body alone feels no force)", maxBodies)
	_, stderr, code := barneshut(t, "-bodies", "1", "-q")
	if code != exitUsage || !strings.Contains(stderr, "-bodies 1: "+want) {
		t.Errorf("-bodies 1: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = barneshut(t, "-input", one, "-q")
	if code != exitFailure || !strings.Contains(stderr, one+": line 1: the number of bodies is 1: "+want) {
		t.Errorf("-input of one body: exit %d, stderr %q", code, stderr)
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-bodies", "1"},
		{"-spheres", "3"},
		{"-theta", "-1"},
		{"-dt", "0"},
		{"-leaf", "0"},
		{"-np", "5", "-bodies", "4"},
		{"-image", "x.jpg"},
		{"-image", "/nonexistent-ibis/x.png"},
		{"-out", "/nonexistent-ibis/bodies.txt"},
		{"-image-every", "2"},
		{"-input", "x", "-bodies", "10"},
		{"-np", "2", "-impl", "mp"},
		{"extra"},
	} {
		if _, err := parseArgs(args, &bytes.Buffer{}); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}

// TestCBaselineSameBits: the C baseline of the force computation (testdata/bh.c, compiled with
// gcc when it is there) counts the same interactions and sums the accelerations to the same
// bits, so the speed comparison in docs/BARNESHUT.md compares the same work.
func TestCBaselineSameBits(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	dir := t.TempDir()
	bin, in := filepath.Join(dir, "bh-c"), filepath.Join(dir, "in.atos")
	if out, err := exec.Command(gcc, "-O2", "-ffp-contract=off", "-o", bin, "testdata/bh.c", "-lm").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	s := plummer(2000, 2, 9)
	var buf bytes.Buffer
	if err := writeAtos(&buf, s); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, in, "0.5", "8", "0.025", "1").Output()
	if err != nil {
		t.Fatalf("bh-c: %v", err)
	}
	sim := &simulation{s: s, p: defaultConfig(t).p, ex: local{}}
	if err := sim.forces(context.Background()); err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, a := range s.acc {
		sum += a[0]
		sum += a[1]
		sum += a[2]
	}
	want := fmt.Sprintf("bh-c bodies=2000 interactions=%d accsum=%.17g ", sim.interactions, sum)
	if !strings.HasPrefix(string(out), want) {
		t.Errorf("C: %s\nGo: %s", out, want)
	}
}

// BenchmarkBuildTree and BenchmarkWalk split a step's force evaluation of 100,000 bodies into
// its undivided part (the tree build every process does) and its divided part (the walks).
func BenchmarkBuildTree(b *testing.B) {
	s := plummer(100000, 2, 1)
	for b.Loop() {
		buildTree(s, 8, 0.5, 0.025)
	}
}

func BenchmarkWalk(b *testing.B) {
	s := plummer(100000, 2, 1)
	t := buildTree(s, 8, 0.5, 0.025)
	var stack []int32
	for b.Loop() {
		for j := range s.n() {
			_, _, _, stack = t.accel(j, stack)
		}
	}
}
