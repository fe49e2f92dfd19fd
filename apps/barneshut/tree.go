package main

import (
	"math"
)

// mortonBits is the depth of the Morton key per dimension (and the deepest tree level).
const mortonBits = 21

// tree is an octree over all bodies, built from their Morton (Z-order) sort: every cell is a
// contiguous range of the sorted bodies, and the sort is also the order in which the
// processes divide the bodies. It depends only on the positions and masses, so every
// process builds the same tree.
type tree struct {
	order      []int32   // body indices in Morton order (ties by index)
	x, y, z, m []float64 // the bodies' positions and masses in Morton order
	cells      []cell    // cells[0] is the root
	theta2     float64   // theta squared
	eps2       float64   // softening squared
}

// cell is a cube of the tree: a leaf of at most leaf bodies (or at the deepest level), or an
// inner cell with its non-empty children at cells[kids:kids+nkids].
type cell struct {
	cx, cy, cz, mass float64 // centre of mass and mass
	lx, ly, lz, size float64 // lower corner and side of the cube
	first, count     int32   // the bodies: order[first:first+count]
	kids             int32
	nkids            int32 // 0 for a leaf
}

// buildTree sorts the bodies of s by Morton key and builds the tree.
func buildTree(s *system, leaf int, theta, eps float64) *tree {
	n := s.n()
	lo, hi := s.pos[0], s.pos[0]
	for _, p := range s.pos {
		for d := range 3 {
			lo[d], hi[d] = min(lo[d], p[d]), max(hi[d], p[d])
		}
	}
	side := max(hi[0]-lo[0], hi[1]-lo[1], hi[2]-lo[2])
	if side == 0 {
		side = 1
	}
	side *= 1 + 1e-12 // so that the highest body falls inside
	keys := make([]uint64, n)
	scaleK := float64(uint64(1)<<mortonBits) / side
	for i, p := range s.pos {
		var k uint64
		for d := range 3 {
			c := uint64(max(0, min(float64(1<<mortonBits-1), math.Floor((p[d]-lo[d])*scaleK))))
			k |= spread(c) << (2 - d)
		}
		keys[i] = k
	}
	t := &tree{theta2: theta * theta, eps2: eps * eps}
	var sorted []uint64
	t.order, sorted = mortonOrder(keys)
	t.x, t.y, t.z, t.m = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for j, i := range t.order {
		t.x[j], t.y[j], t.z[j], t.m[j] = s.pos[i][0], s.pos[i][1], s.pos[i][2], s.mass[i]
	}
	t.cells = make([]cell, 1, 4*n/max(leaf, 1)+16) // a Plummer model makes about 3.4n/leaf
	t.build(0, sorted, 0, int32(n), 0, lo, side, leaf)
	return t
}

// spread puts the low 21 bits of v three bits apart.
func spread(v uint64) uint64 {
	v &= 0x1fffff
	v = (v | v<<32) & 0x1f00000000ffff
	v = (v | v<<16) & 0x1f0000ff0000ff
	v = (v | v<<8) & 0x100f00f00f00f00f
	v = (v | v<<4) & 0x10c30c30c30c30c3
	v = (v | v<<2) & 0x1249249249249249
	return v
}

// build fills cells[c] with the bodies first..first+count-1 (sorted keys in keys), a cube
// at level with lower corner lo and side size, and its subtree.
func (t *tree) build(c int, keys []uint64, first, count int32, level int, lo vec, size float64, leaf int) {
	t.cells[c] = cell{lx: lo[0], ly: lo[1], lz: lo[2], size: size, first: first, count: count}
	if int(count) <= leaf || level == mortonBits {
		var m, x, y, z float64
		for j := first; j < first+count; j++ {
			m += t.m[j]
			x += t.m[j] * t.x[j]
			y += t.m[j] * t.y[j]
			z += t.m[j] * t.z[j]
		}
		t.finish(c, m, x, y, z)
		return
	}
	// The children are the runs of equal octal digits at this level.
	shift := uint(3 * (mortonBits - 1 - level))
	var starts [9]int32
	var digits [8]int
	nk := 0
	for j := first; j < first+count; {
		d := int(keys[j]>>shift) & 7
		k := j
		for k < first+count && int(keys[k]>>shift)&7 == d {
			k++
		}
		starts[nk], digits[nk] = j, d
		nk++
		j = k
	}
	starts[nk] = first + count
	kids := len(t.cells)
	t.cells = append(t.cells, make([]cell, nk)...)
	t.cells[c].kids, t.cells[c].nkids = int32(kids), int32(nk)
	half := size / 2
	for k := range nk {
		d := digits[k]
		clo := lo
		for dim := range 3 {
			if d>>(2-dim)&1 == 1 {
				clo[dim] += half
			}
		}
		t.build(kids+k, keys, starts[k], starts[k+1]-starts[k], level+1, clo, half, leaf)
	}
	var m, x, y, z float64
	for k := range nk {
		ch := &t.cells[kids+k]
		m += ch.mass
		x += ch.mass * ch.cx
		y += ch.mass * ch.cy
		z += ch.mass * ch.cz
	}
	t.finish(c, m, x, y, z)
}

func (t *tree) finish(c int, m, x, y, z float64) {
	cl := &t.cells[c]
	cl.mass = m
	if m > 0 {
		cl.cx, cl.cy, cl.cz = x/m, y/m, z/m
	}
}

// accel walks the tree for the body at Morton position j: it returns its acceleration, its
// potential and the number of interactions (body-body and body-cell). A cell is taken whole
// when its side over the distance from the body to its centre of mass is below theta and the
// body is outside it; otherwise it is opened. The walk visits the children in a fixed order,
// so a body's result depends only on the tree, never on which process computes it. stack is
// scratch space.
func (t *tree) accel(j int, stack []int32) (a vec, phi float64, n int64, _ []int32) {
	px, py, pz := t.x[j], t.y[j], t.z[j]
	var ax, ay, az float64
	stack = append(stack[:0], 0)
	for len(stack) > 0 {
		c := &t.cells[stack[len(stack)-1]]
		stack = stack[:len(stack)-1]
		if c.nkids == 0 {
			for k := c.first; k < c.first+c.count; k++ {
				if int(k) == j {
					continue
				}
				dx, dy, dz := t.x[k]-px, t.y[k]-py, t.z[k]-pz
				r2 := dx*dx + dy*dy + dz*dz + t.eps2
				inv := 1 / math.Sqrt(r2)
				mi := t.m[k] * inv
				mi3 := mi * inv * inv
				ax += dx * mi3
				ay += dy * mi3
				az += dz * mi3
				phi -= mi
				n++
			}
			continue
		}
		dx, dy, dz := c.cx-px, c.cy-py, c.cz-pz
		d2 := dx*dx + dy*dy + dz*dz
		inside := px >= c.lx && px < c.lx+c.size && py >= c.ly && py < c.ly+c.size && pz >= c.lz && pz < c.lz+c.size
		if !inside && c.size*c.size < t.theta2*d2 {
			r2 := d2 + t.eps2
			inv := 1 / math.Sqrt(r2)
			mi := c.mass * inv
			mi3 := mi * inv * inv
			ax += dx * mi3
			ay += dy * mi3
			az += dz * mi3
			phi -= mi
			n++
			continue
		}
		for k := c.nkids - 1; k >= 0; k-- {
			stack = append(stack, c.kids+k)
		}
	}
	return vec{ax, ay, az}, phi, n, stack
}
