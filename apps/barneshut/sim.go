package main

import (
	"context"
	"fmt"
	"math"

	"github.com/ibisgo/ibis/internal/phases"
)

// params are the physical and numerical parameters of a run.
type params struct {
	leaf  int
	theta float64
	eps   float64
	dt    float64
	steps int
}

// exchanger gives every process every block of per-body values: recv is the concatenation of
// the processes' sends in rank order, counts[r] values from rank r (mpj's Allgatherv, or a copy
// for one process).
type exchanger interface {
	rank() int
	size() int
	allgather(ctx context.Context, send, recv []float64, counts []int) error
	barrier(ctx context.Context) error
}

// local is the exchanger of a world of one.
type local struct{}

func (local) rank() int                     { return 0 }
func (local) size() int                     { return 1 }
func (local) barrier(context.Context) error { return nil }
func (local) allgather(_ context.Context, send, recv []float64, _ []int) error {
	copy(recv, send)
	return nil
}

// perBody is the number of float64 values each process sends per body it computed:
// the acceleration, the potential and the interaction count.
const perBody = 5

// simulation is one process's view of a run: the whole system, the parameters, and how to
// reach the others.
type simulation struct {
	s     *system
	p     params
	ex    exchanger
	t     *tree
	stack []int32
	send  []float64
	recv  []float64
	clock *phases.Clock // where the timed steps' time goes (-phases)
	// Statistics of the last force evaluation.
	interactions int64 // of all processes
	mine         int   // bodies this process computed
}

// forces computes the accelerations, potentials and costs of all bodies at their current
// positions: every process builds the same tree, takes its block of the Morton order (blocks
// of about equal cost by the previous evaluation's interaction counts, or of equal size the
// first time), walks the tree for those bodies, and then every process receives every
// block.
func (sim *simulation) forces(ctx context.Context) error {
	s, n, np := sim.s, sim.s.n(), sim.ex.size()
	sim.clock.Enter(phaseTree)
	sim.t = buildTree(s, sim.p.leaf, sim.p.theta, sim.p.eps)
	bounds := partition(sim.t.order, s.cost, np)
	sim.clock.Enter(phaseWalk)
	lo, hi := bounds[sim.ex.rank()], bounds[sim.ex.rank()+1]
	sim.mine = hi - lo
	sim.send = sim.send[:0]
	for j := lo; j < hi; j++ {
		var a vec
		var phi float64
		var k int64
		a, phi, k, sim.stack = sim.t.accel(j, sim.stack)
		sim.send = append(sim.send, a[0], a[1], a[2], phi, float64(k))
	}
	counts := make([]int, np)
	for r := range np {
		counts[r] = perBody * (bounds[r+1] - bounds[r])
	}
	if len(sim.recv) != perBody*n {
		sim.recv = make([]float64, perBody*n)
	}
	sim.clock.Enter(phaseExchange)
	if err := sim.ex.allgather(ctx, sim.send, sim.recv, counts); err != nil {
		return fmt.Errorf("exchanging the forces: %w", err)
	}
	sim.clock.Enter(phaseUpdate)
	sim.interactions = 0
	for j, i := range sim.t.order {
		v := sim.recv[perBody*j:][:perBody]
		s.acc[i] = vec{v[0], v[1], v[2]}
		s.phi[i] = v[3]
		s.cost[i] = int64(v[4])
		sim.interactions += s.cost[i]
	}
	return nil
}

// The phases of a step that -phases reports: building the tree (every process builds the
// whole tree) and splitting the bodies, walking the tree for this process's bodies, the
// allgather of the forces, and updating every body (the integration, also on every
// process).
const (
	phaseUpdate = iota
	phaseTree
	phaseWalk
	phaseExchange
)

var phaseNames = []string{"update", "tree", "walk", "exchange"}

// partition splits the Morton order into np contiguous blocks of about equal cost (each body
// at least cost 1) and returns their bounds: block r is order[b[r]:b[r+1]]. Every block has
// at least one body when there are at least np bodies.
func partition(order []int32, cost []int64, np int) []int {
	n := len(order)
	prefix := make([]int64, n+1)
	for j, i := range order {
		prefix[j+1] = prefix[j] + max(cost[i], 1)
	}
	total := prefix[n]
	b := make([]int, np+1)
	b[np] = n
	j := 0
	for r := 1; r < np; r++ {
		target := total * int64(r) / int64(np)
		for j < n && prefix[j] < target {
			j++
		}
		b[r] = max(j, min(b[r-1]+1, n))
	}
	for r := np - 1; r >= 1; r-- { // leave a body for each later block
		b[r] = min(b[r], max(b[r+1]-1, 0))
	}
	return b
}

// step advances the system by one leapfrog step, kick-drift-kick: v += a dt/2; x += v dt;
// new forces; v += a dt/2. Every process updates every body, identically.
func (sim *simulation) step(ctx context.Context) error {
	s, h := sim.s, sim.p.dt/2
	for i := range s.pos {
		for d := range 3 {
			s.vel[i][d] += s.acc[i][d] * h
			s.pos[i][d] += s.vel[i][d] * sim.p.dt
		}
	}
	if err := sim.forces(ctx); err != nil {
		return err
	}
	for i := range s.pos {
		for d := range 3 {
			s.vel[i][d] += s.acc[i][d] * h
		}
	}
	s.time += sim.p.dt
	return nil
}

// energy is the total energy, kinetic plus potential (from the tree's potentials, so valid
// right after forces), summed in body order.
func (s *system) energy() float64 {
	var e float64
	for i, m := range s.mass {
		v := s.vel[i]
		e += m * (0.5*(v[0]*v[0]+v[1]*v[1]+v[2]*v[2]) + 0.5*s.phi[i])
	}
	return e
}

// checksum adds the absolute values of the coordinates of the positions (x, y, z), body by
// body in body order, into one float64 (absolute values, so that the symmetric initial
// conditions do not cancel out to a sum near 0 that hides the low bits).
func (s *system) checksum() float64 {
	var sum float64
	for _, p := range s.pos {
		sum += math.Abs(p[0])
		sum += math.Abs(p[1])
		sum += math.Abs(p[2])
	}
	return sum
}

// direct is the acceleration of body i by direct summation over all other bodies, with the
// same softening.
func (s *system) direct(i int, eps float64) vec {
	var a vec
	p, e2 := s.pos[i], eps*eps
	for k, q := range s.pos {
		if k == i {
			continue
		}
		dx, dy, dz := q[0]-p[0], q[1]-p[1], q[2]-p[2]
		inv := 1 / math.Sqrt(dx*dx+dy*dy+dz*dz+e2)
		f := s.mass[k] * inv * inv * inv
		a[0] += dx * f
		a[1] += dy * f
		a[2] += dz * f
	}
	return a
}
