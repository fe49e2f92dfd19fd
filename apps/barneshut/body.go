package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

// vec is a point or vector in 3-D.
type vec [3]float64

// system is the state of the simulation, in body order (the order of the input file or of the
// generator). Every process holds all of it.
type system struct {
	mass     []float64
	pos, vel []vec
	acc      []vec     // accelerations at pos (from the last force evaluation)
	phi      []float64 // potentials at pos (idem)
	cost     []int64   // interactions of each body's last tree walk
	time     float64
}

func newSystem(n int) *system {
	return &system{
		mass: make([]float64, n), pos: make([]vec, n), vel: make([]vec, n),
		acc: make([]vec, n), phi: make([]float64, n), cost: make([]int64, n),
	}
}

func (s *system) n() int { return len(s.mass) }

// plummer returns n bodies of total mass 1 (G = 1) drawn from seed: one Plummer sphere in
// standard (Henon) units when spheres is 1, or, when it is 2, two spheres of half the mass
// each, centred at -/+(1.5, 0.4, 0) and approaching each other at -/+(0.3, 0, 0), a bound
// pair that collides and merges (the two-cluster input of SPLASH-2 Barnes, in spirit).
// Bodies 0..ceil(n/2)-1 form the first sphere.
func plummer(n, spheres int, seed uint64) *system {
	s := newSystem(n)
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	if spheres == 1 {
		plummerSphere(rng, s, 0, n, 1, vec{}, vec{})
		return s
	}
	na := n - n/2
	plummerSphere(rng, s, 0, na, float64(na)/float64(n), vec{-1.5, -0.4, 0}, vec{0.3, 0, 0})
	plummerSphere(rng, s, na, n, float64(n-na)/float64(n), vec{1.5, 0.4, 0}, vec{-0.3, 0, 0})
	return s
}

// plummerSphere fills bodies lo..hi-1 with a Plummer sphere of mass m (each body m/(hi-lo)),
// after Aarseth, Henon and Wielen (1974): radii from the cumulative mass (cut at 99.9% of
// it), speeds by von Neumann rejection, isotropic directions; scaled to standard units
// (virial radius 1 for the whole sphere) and then moved to centre c with velocity v.
func plummerSphere(rng *rand.Rand, s *system, lo, hi int, m float64, c, v vec) {
	k := hi - lo
	if k == 0 {
		return
	}
	const rsc = 3 * math.Pi / 16 // Plummer scale length 1 -> virial radius 1
	vsc := math.Sqrt(m / rsc)    // and a sphere of mass m keeps that radius
	var cm, cv vec
	for i := lo; i < hi; i++ {
		x := rng.Float64()*0.999 + 1e-12
		r := 1 / math.Sqrt(math.Pow(x, -2.0/3.0)-1)
		var q float64
		for {
			q = rng.Float64()
			if rng.Float64()*0.1 < q*q*math.Pow(1-q*q, 3.5) {
				break
			}
		}
		speed := q * math.Sqrt2 * math.Pow(1+r*r, -0.25)
		s.mass[i] = m / float64(k)
		s.pos[i] = scale(randomDirection(rng), r*rsc)
		s.vel[i] = scale(randomDirection(rng), speed*vsc)
		for d := range 3 {
			cm[d] += s.pos[i][d]
			cv[d] += s.vel[i][d]
		}
	}
	for i := lo; i < hi; i++ {
		for d := range 3 {
			s.pos[i][d] += c[d] - cm[d]/float64(k)
			s.vel[i][d] += v[d] - cv[d]/float64(k)
		}
	}
}

func randomDirection(rng *rand.Rand) vec {
	z := 2*rng.Float64() - 1
	a := 2 * math.Pi * rng.Float64()
	rho := math.Sqrt(1 - z*z)
	return vec{rho * math.Cos(a), rho * math.Sin(a), z}
}

func scale(v vec, f float64) vec { return vec{v[0] * f, v[1] * f, v[2] * f} }

// The number of bodies a run takes, generated (-bodies) or read (-input): one body alone
// feels no force, and maxBodies bounds what a file can make the program allocate.
const (
	minBodies = 2
	maxBodies = 1 << 27
)

// checkBodies refuses a number of bodies outside minBodies..maxBodies, with the one message
// that -bodies and an input file share.
func checkBodies(n int) error {
	if n < minBodies || n > maxBodies {
		return fmt.Errorf("want %d to %d bodies (one body alone feels no force)", minBodies, maxBodies)
	}
	return nil
}

// readAtos reads the plain-text body format of NEMO's atos, as the SPLASH-2 and Java Barnes-Hut
// codes read it: whitespace-separated numbers N, the dimension (3), the time, then N masses,
// N positions (x y z) and N velocities (x y z). Errors name the line.
func readAtos(r io.Reader) (*system, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	line := 0
	var fields []string
	next := func(what string) (string, int, error) {
		for len(fields) == 0 {
			if !sc.Scan() {
				if err := sc.Err(); err != nil {
					return "", line + 1, fmt.Errorf("line %d: %w", line+1, err)
				}
				return "", line, fmt.Errorf("line %d: the file ends where %s should be", max(line, 1), what)
			}
			line++
			fields = strings.Fields(sc.Text())
		}
		f := fields[0]
		fields = fields[1:]
		return f, line, nil
	}
	number := func(what string) (float64, error) {
		f, l, err := next(what)
		if err != nil {
			return 0, err
		}
		v, err := strconv.ParseFloat(f, 64)
		switch {
		case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
			return 0, fmt.Errorf("line %d: %s is %q, not a finite number", l, what, f)
		case math.Abs(v) > maxMagnitude:
			return 0, fmt.Errorf("line %d: %s is %q, beyond +-%g: squares and products of such numbers overflow", l, what, f, maxMagnitude)
		}
		return v, nil
	}
	integer := func(what string, lo, hi int) (int, error) {
		f, l, err := next(what)
		if err != nil {
			return 0, err
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < lo || v > hi {
			return 0, fmt.Errorf("line %d: %s is %q, want an integer from %d to %d", l, what, f, lo, hi)
		}
		return v, nil
	}
	n, err := integer("the number of bodies", 0, maxBodies)
	if err != nil {
		return nil, err
	}
	if err := checkBodies(n); err != nil {
		return nil, fmt.Errorf("line %d: the number of bodies is %d: %w", line, n, err)
	}
	if _, err := integer("the dimension", 3, 3); err != nil {
		return nil, err
	}
	t, err := number("the time")
	if err != nil {
		return nil, err
	}
	// Grown as the numbers come, so that a short file claiming a huge N allocates little.
	s := &system{time: t}
	for i := range n {
		m, err := number(fmt.Sprintf("the mass of body %d", i))
		if err != nil {
			return nil, err
		}
		if m <= 0 {
			return nil, fmt.Errorf("line %d: the mass of body %d is %g, want more than 0", line, i, m)
		}
		s.mass = append(s.mass, m)
	}
	for _, dst := range []*[]vec{&s.pos, &s.vel} {
		what := "position"
		if dst == &s.vel {
			what = "velocity"
		}
		for i := range n {
			var v vec
			for d := range 3 {
				if v[d], err = number(fmt.Sprintf("the %s of body %d (%c)", what, i, "xyz"[d])); err != nil {
					return nil, err
				}
			}
			*dst = append(*dst, v)
		}
	}
	if f, l, err := next("nothing"); err == nil {
		return nil, fmt.Errorf("line %d: %q after the %d bodies: the file should end there", l, f, n)
	}
	s.acc, s.phi, s.cost = make([]vec, n), make([]float64, n), make([]int64, n)
	return s, nil
}

// maxMagnitude bounds every number of an input file: distances squared, m*v*v and m*m/r
// of numbers up to it stay far within float64 (about 1.8e308); beyond, forces and
// energies overflow to Inf or NaN, or underflow to 0, and the run is silently wrong.
const maxMagnitude = 1e100

// readAtosFile is readAtos of a file, its errors naming the file.
func readAtosFile(path string) (*system, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-input: %w", err)
	}
	defer func() { _ = f.Close() }() // read only
	s, err := readAtos(f)
	if err != nil {
		return nil, fmt.Errorf("-input %s: %w", path, err)
	}
	return s, nil
}

// writeAtos writes s in the format readAtos reads, every number with %.17g, so that reading
// it back gives the same bits.
func writeAtos(w io.Writer, s *system) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%d\n3\n%.17g\n", s.n(), s.time)
	for _, m := range s.mass {
		fmt.Fprintf(bw, "%.17g\n", m)
	}
	for _, vs := range [][]vec{s.pos, s.vel} {
		for _, v := range vs {
			fmt.Fprintf(bw, "%.17g %.17g %.17g\n", v[0], v[1], v[2])
		}
	}
	return bw.Flush()
}

func writeAtosFile(path string, s *system) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("-out: %w", err)
	}
	if err := writeAtos(f, s); err != nil {
		_ = f.Close() // the write error is the one to report
		return fmt.Errorf("-out %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("-out %s: %w", path, err)
	}
	return nil
}
