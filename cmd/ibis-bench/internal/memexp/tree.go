package memexp

import (
	"fmt"
	"math/rand/v2"

	"github.com/ibisgo/ibis/serialization"
)

// nodeUserBytes is the user data of one tree node: four int32.
const nodeUserBytes = 16

// MaxTreeNodes bounds the tree of the serialization experiment.
const MaxTreeNodes = 1 << 22

// node is one object of the tree benchmark: four int32 of user data and two
// references, as in the thesis. It is a plain struct, as a program would
// write it and as the throughput experiment sends it (payload.Node), so
// WriteObject sends it through the object codec.
type node struct {
	A, B, C, D  int32
	Left, Right *node
}

// Tree references on the data-serialization wire: each reference is one
// int32, as in Ibis, where a reference is a handle.
const (
	refNil  = 0
	refNode = 1
)

// buildTree returns a complete binary tree of n nodes (heap order: the
// children of node i are 2i+1 and 2i+2) holding pseudo-random values.
func buildTree(n int, seed uint64) *node {
	if n <= 0 {
		return nil
	}
	r := rand.New(rand.NewPCG(seed, 0x7ee))
	nodes := make([]node, n)
	for i := range nodes {
		nd := &nodes[i]
		nd.A, nd.B, nd.C, nd.D = int32(r.Uint32()), int32(r.Uint32()), int32(r.Uint32()), int32(r.Uint32())
		if l := 2*i + 1; l < n {
			nd.Left = &nodes[l]
		}
		if rt := 2*i + 2; rt < n {
			nd.Right = &nodes[rt]
		}
	}
	return &nodes[0]
}

// treeCodec writes and reads a tree with the data serialization, the way
// the serializer Ibis generates for such a class does: in preorder, every
// reference an int32 (refNil or refNode), every node its four int32. It
// works with an explicit stack, so a degenerate tree cannot exhaust the
// goroutine stack, and keeps the stack between messages.
type treeCodec struct {
	wstack []*node
	rstack []**node
}

// write writes the tree rooted at root.
func (c *treeCodec) write(w *serialization.Writer, root *node) error {
	st := append(c.wstack[:0], root)
	defer func() { c.wstack = st[:0] }()
	for len(st) > 0 {
		nd := st[len(st)-1]
		st = st[:len(st)-1]
		if nd == nil {
			if err := w.WriteInt32(refNil); err != nil {
				return err
			}
			continue
		}
		for _, v := range [...]int32{refNode, nd.A, nd.B, nd.C, nd.D} {
			if err := w.WriteInt32(v); err != nil {
				return err
			}
		}
		st = append(st, nd.Right, nd.Left) // left is written first
	}
	return nil
}

// read reads a tree written by write, allocating its nodes. A stream with
// more than maxNodes nodes or with a reference other than refNil or
// refNode is rejected with ErrMismatch before anything beyond maxNodes is
// allocated.
func (c *treeCodec) read(r *serialization.Reader, maxNodes int) (*node, error) {
	var root *node
	st := append(c.rstack[:0], &root)
	defer func() { c.rstack = st[:0] }()
	count := 0
	for len(st) > 0 {
		slot := st[len(st)-1]
		st = st[:len(st)-1]
		ref, err := r.ReadInt32()
		if err != nil {
			return nil, err
		}
		switch ref {
		case refNil:
			continue
		case refNode:
		default:
			return nil, fmt.Errorf("%w: tree reference %d, want %d or %d", ErrMismatch, ref, refNil, refNode)
		}
		if count++; count > maxNodes {
			return nil, fmt.Errorf("%w: the tree has more than %d nodes", ErrMismatch, maxNodes)
		}
		nd := new(node)
		for _, f := range [...]*int32{&nd.A, &nd.B, &nd.C, &nd.D} {
			if *f, err = r.ReadInt32(); err != nil {
				return nil, err
			}
		}
		*slot = nd
		st = append(st, &nd.Right, &nd.Left)
	}
	return root, nil
}

// compareTrees returns an ErrMismatch error unless got has the shape and
// values of want.
func compareTrees(got, want *node) error {
	type pair struct{ g, w *node }
	st := []pair{{got, want}}
	for i := 0; len(st) > 0; {
		p := st[len(st)-1]
		st = st[:len(st)-1]
		switch {
		case p.g == nil && p.w == nil:
			continue
		case p.g == nil || p.w == nil:
			return fmt.Errorf("%w: tree node %d (preorder): present on one side only", ErrMismatch, i)
		case p.g.A != p.w.A || p.g.B != p.w.B || p.g.C != p.w.C || p.g.D != p.w.D:
			return fmt.Errorf("%w: tree node %d (preorder): values %d %d %d %d, want %d %d %d %d", ErrMismatch, i,
				p.g.A, p.g.B, p.g.C, p.g.D, p.w.A, p.w.B, p.w.C, p.w.D)
		}
		i++
		st = append(st, pair{p.g.Right, p.w.Right}, pair{p.g.Left, p.w.Left})
	}
	return nil
}

// treePayload is a tree sent with the generated-style data serializer
// (data) or WriteObject and the object codec (object). Reads always build a new
// tree: allocating the objects is part of deserializing them.
type treePayload struct {
	object bool
	nodes  int
	root   *node
	out    *node
	codec  treeCodec
}

func newTreePayload(nodes int, object bool, seed uint64) *treePayload {
	return &treePayload{object: object, nodes: nodes, root: buildTree(nodes, seed)}
}

func (p *treePayload) write(w *serialization.Writer) error {
	if p.object {
		return w.WriteObject(p.root)
	}
	return p.codec.write(w, p.root)
}

func (p *treePayload) read(r *serialization.Reader) error {
	p.out = nil
	if p.object {
		return r.ReadObject(&p.out)
	}
	var err error
	p.out, err = p.codec.read(r, p.nodes)
	return err
}

func (p *treePayload) clearOut() { p.out = nil }

func (p *treePayload) checkOut() error { return compareTrees(p.out, p.root) }
