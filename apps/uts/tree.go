package main

import (
	"crypto/sha1" //nolint:gosec // UTS defines its random numbers by SHA-1; no security rests on them
	"encoding/binary"
	"fmt"
	"math"
)

// The tree types of UTS.
const (
	binomial  = 0 // every node below the root has M children with probability Q
	geometric = 1 // a node's children are geometrically distributed, with mean by Shape
)

// The shapes of a geometric tree: how the mean branching factor changes with depth.
const (
	linear = 0 // b0 * (1 - depth/Depth)
	expdec = 1 // b0 * depth^(-log b0 / log Depth)
	cyclic = 2 // b0^sin(2 pi depth / Depth), nothing below 5*Depth
	fixed  = 3 // b0 down to Depth, nothing below
)

// maxChildren bounds a node's children, as UTS does (only a binomial root has more).
const maxChildren = 100

// params describes a UTS tree; the names follow UTS's flags (-t -b -q -m -d -a -r).
type params struct {
	Type  int     `msgpack:"t"`
	B0    float64 `msgpack:"b"` // the root's branching factor
	Q     float64 `msgpack:"q"` // binomial: the probability of children
	M     int     `msgpack:"m"` // binomial: the number of children
	Depth int     `msgpack:"d"` // geometric: the depth parameter
	Shape int     `msgpack:"a"`
	Seed  int     `msgpack:"r"`
}

// check says what is wrong with p, for flags and for jobs that arrive over the network.
func (p params) check() error {
	switch {
	case p.Type != binomial && p.Type != geometric:
		return fmt.Errorf("tree type %d: must be 0 (binomial) or 1 (geometric); UTS's hybrid trees are not built", p.Type)
	case p.Shape < linear || p.Shape > fixed:
		return fmt.Errorf("shape %d: must be 0 (linear), 1 (exponential decrease), 2 (cyclic) or 3 (fixed)", p.Shape)
	case !(p.B0 >= 0 && p.B0 <= 1e6):
		return fmt.Errorf("root branching factor %g: must be 0 to 1e6", p.B0)
	case !(p.Q >= 0 && p.Q <= 1):
		return fmt.Errorf("probability %g: must be 0 to 1", p.Q)
	case p.M < 0 || p.M > maxChildren:
		return fmt.Errorf("binomial children %d: must be 0 to %d", p.M, maxChildren)
	case p.Type == binomial && p.ends() < minEnds:
		return fmt.Errorf("binomial tree with q*m = %g*%d = %g: a node has more than one child on average, "+
			"and the tree ends with probability %.2g only (the search would go on until the stack ran out); "+
			"make q*m at most 1, or only a little above it (UTS's T3L: q*m 1.00007, ends with probability 0.93)",
			p.Q, p.M, p.Q*float64(p.M), p.ends())
	case p.Depth < 1:
		return fmt.Errorf("depth %d: must be at least 1", p.Depth)
	}
	return nil
}

// minEnds is the least probability of ending that a binomial tree must have. Above
// q*m = 1 a tree is infinite with a probability above 0, and the search of one that
// is, a recursion, ends only when the stack does; UTS's published binomial samples
// reach slightly above 1 (T3L) and end with a probability of 0.93.
const minEnds = 0.9

// ends returns the probability that the binomial tree p ends: each of the root's b0
// children's subtrees dies out with the least fixed point s of s = 1-q + q*s^m
// (the generating function of a node's children), so the tree does with s^b0.
func (p params) ends() float64 {
	q, m := p.Q, float64(p.M)
	if q*m <= 1 {
		return 1
	}
	s := 0.0
	for range 1 << 20 { // from below, it rises to the least fixed point
		next := 1 - q + q*math.Pow(s, m)
		if next-s < 1e-13 {
			s = next
			break
		}
		s = next
	}
	return math.Pow(s, math.Floor(p.B0))
}

// node is a tree node: its random state (which determines its subtree) and height.
type node struct {
	State  [20]byte `msgpack:"s"`
	Height int      `msgpack:"h"`
}

// root is the tree's root: its state is the SHA-1 of 16 zero bytes and the seed.
func (p params) root() node {
	var gen [20]byte
	binary.BigEndian.PutUint32(gen[16:], uint32(p.Seed))
	return node{State: sha1.Sum(gen[:])}
}

// child is the i-th child of n: its state is the SHA-1 of n's state and i.
func (p params) child(n node, i int) node {
	var buf [24]byte
	copy(buf[:20], n.State[:])
	binary.BigEndian.PutUint32(buf[20:], uint32(i))
	return node{State: sha1.Sum(buf[:]), Height: n.Height + 1}
}

// prob is n's random number as a probability in [0, 1).
func prob(n node) float64 {
	return float64(binary.BigEndian.Uint32(n.State[16:])&0x7fffffff) / 2147483648.0
}

// children is how many children n has.
func (p params) children(n node) int {
	var c int
	switch p.Type {
	case binomial:
		c = p.binomialChildren(n)
	case geometric:
		c = p.geometricChildren(n)
	}
	if n.Height == 0 && p.Type == binomial {
		return min(c, int(math.Ceil(p.B0)))
	}
	return min(c, maxChildren)
}

func (p params) binomialChildren(n node) int {
	if n.Height == 0 {
		return int(math.Floor(p.B0))
	}
	if prob(n) < p.Q {
		return p.M
	}
	return 0
}

func (p params) geometricChildren(n node) int {
	b := p.B0
	if d := float64(n.Height); n.Height > 0 {
		switch p.Shape {
		case expdec:
			b = p.B0 * math.Pow(d, -math.Log(p.B0)/math.Log(float64(p.Depth)))
		case cyclic:
			if n.Height > 5*p.Depth {
				b = 0
			} else {
				b = math.Pow(p.B0, math.Sin(2*math.Pi*d/float64(p.Depth)))
			}
		case fixed:
			if n.Height >= p.Depth {
				b = 0
			}
		default:
			b = p.B0 * (1 - d/float64(p.Depth))
		}
	}
	q := 1 / (1 + b)
	c := math.Floor(math.Log(1-prob(n)) / math.Log(1-q))
	if !(c >= 0) { // b = 0 makes the division 0/0 or x/-Inf
		return 0
	}
	return int(min(c, maxChildren))
}

// count is the sequential search: the nodes of n's subtree.
func (p params) count(n node) int64 {
	total := int64(1)
	for i := range p.children(n) {
		total += p.count(p.child(n, i))
	}
	return total
}
