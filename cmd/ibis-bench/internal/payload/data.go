package payload

import (
	"fmt"

	"github.com/ibisgo/ibis/ipl"
)

// ItemSize is the user data of one Item or Node: four int32.
const ItemSize = 16

// Item is the small object of the Objects kind: four int32 of user data.
type Item struct {
	A, B, C, D int32
}

// Node is one node of the Tree kind: four int32 of user data and two children, the
// tree of Table 6.2/6.3 of the NioIbis thesis.
type Node struct {
	A, B, C, D  int32
	Left, Right *Node
}

// MsgpackItem is Item with a msgpack struct tag, which leaves it to msgpack: the
// ObjectsMsgpack kind measures the object path without the codec.
type MsgpackItem struct {
	A       int32 `msgpack:"A"`
	B, C, D int32
}

// MsgpackNode is Node left to msgpack by its tag (TreeMsgpack).
type MsgpackNode struct {
	A           int32 `msgpack:"A"`
	B, C, D     int32
	Left, Right *MsgpackNode
}

// Data is one payload in memory: what is written, and where a read puts it.
type Data struct {
	Spec Spec
	b    []byte
	i32  []int32
	i64  []int64
	f32  []float32
	f64  []float64
	obj  []Item
	tree *Node
	mobj []MsgpackItem
	mtre *MsgpackNode
	b2   [][]byte
	f2   [][]float32
}

// New allocates a payload for s filled with a pattern that Check recognises, so
// that a round trip can be verified.
func New(s Spec) (*Data, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	d := &Data{Spec: s}
	n := s.Elems()
	switch s.Kind {
	case Bytes:
		d.b = make([]byte, n)
		for i := range d.b {
			d.b[i] = byte(i * 7)
		}
	case Int32:
		d.i32 = make([]int32, n)
		for i := range d.i32 {
			d.i32[i] = int32(i*3 + 1)
		}
	case Int64:
		d.i64 = make([]int64, n)
		for i := range d.i64 {
			d.i64[i] = int64(i)<<33 + 5
		}
	case Float32:
		d.f32 = make([]float32, n)
		for i := range d.f32 {
			d.f32[i] = float32(i) + 0.5
		}
	case Float64:
		d.f64 = make([]float64, n)
		for i := range d.f64 {
			d.f64[i] = float64(i) + 0.25
		}
	case Objects:
		d.obj = make([]Item, n)
		for i := range d.obj {
			d.obj[i] = itemAt(i)
		}
	case Tree:
		next := int32(0)
		d.tree = buildTree(n, &next)
	case ObjectsMsgpack:
		d.mobj = make([]MsgpackItem, n)
		for i := range d.mobj {
			d.mobj[i] = MsgpackItem(itemAt(i)) // the same fields: only the tag differs
		}
	case TreeMsgpack:
		next := int32(0)
		d.mtre = msgpackTree(buildTree(n, &next))
	case Bytes2D:
		d.b2 = make([][]byte, s.Rows)
		for r := range d.b2 {
			d.b2[r] = make([]byte, n/s.Rows)
			for c := range d.b2[r] {
				d.b2[r][c] = byte(r + c)
			}
		}
	case Float322D:
		d.f2 = make([][]float32, s.Rows)
		for r := range d.f2 {
			d.f2[r] = make([]float32, n/s.Rows)
			for c := range d.f2[r] {
				d.f2[r][c] = float32(r*n/s.Rows + c)
			}
		}
	}
	return d, nil
}

// buildTree builds a balanced binary tree of n nodes numbered in pre-order.
func buildTree(n int, next *int32) *Node {
	if n == 0 {
		return nil
	}
	v := *next
	*next++
	left := (n - 1) / 2
	t := &Node{A: v, B: v + 1, C: v + 2, D: v + 3}
	t.Left = buildTree(left, next)
	t.Right = buildTree(n-1-left, next)
	return t
}

// itemAt is the pattern of item i of an Objects payload.
func itemAt(i int) Item { return Item{int32(i), int32(i + 1), int32(i + 2), int32(i + 3)} }

// msgpackTree copies a tree into MsgpackNodes.
func msgpackTree(t *Node) *MsgpackNode {
	if t == nil {
		return nil
	}
	return &MsgpackNode{A: t.A, B: t.B, C: t.C, D: t.D, Left: msgpackTree(t.Left), Right: msgpackTree(t.Right)}
}

// Write writes the payload to a message: primitive and 2-D slices with WriteArray,
// objects and trees with WriteObject.
func (d *Data) Write(w ipl.WriteMessage) error {
	var err error
	switch d.Spec.Kind {
	case Bytes:
		err = w.WriteArray(d.b)
	case Int32:
		err = w.WriteArray(d.i32)
	case Int64:
		err = w.WriteArray(d.i64)
	case Float32:
		err = w.WriteArray(d.f32)
	case Float64:
		err = w.WriteArray(d.f64)
	case Objects:
		err = w.WriteObject(d.obj)
	case Tree:
		err = w.WriteObject(d.tree)
	case ObjectsMsgpack:
		err = w.WriteObject(d.mobj)
	case TreeMsgpack:
		err = w.WriteObject(d.mtre)
	case Bytes2D:
		err = w.WriteArray(d.b2)
	case Float322D:
		err = w.WriteArray(d.f2)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", d.Spec, err)
	}
	return nil
}

// Read reads a payload of the same spec from a message into d's memory (objects and
// trees are decoded anew, as a receiver of objects must).
func (d *Data) Read(m ipl.ReadMessage) error {
	var err error
	switch d.Spec.Kind {
	case Bytes:
		err = m.ReadArray(d.b)
	case Int32:
		err = m.ReadArray(d.i32)
	case Int64:
		err = m.ReadArray(d.i64)
	case Float32:
		err = m.ReadArray(d.f32)
	case Float64:
		err = m.ReadArray(d.f64)
	case Objects:
		d.obj = d.obj[:0]
		err = m.ReadObject(&d.obj)
	case Tree:
		d.tree = nil
		err = m.ReadObject(&d.tree)
	case ObjectsMsgpack:
		d.mobj = d.mobj[:0]
		err = m.ReadObject(&d.mobj)
	case TreeMsgpack:
		d.mtre = nil
		err = m.ReadObject(&d.mtre)
	case Bytes2D:
		err = m.ReadArray(d.b2)
	case Float322D:
		err = m.ReadArray(d.f2)
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", d.Spec, err)
	}
	return nil
}

// Check reports whether d holds exactly the pattern New(d.Spec) puts in, so that a
// payload sent out and echoed back can be verified.
func (d *Data) Check() error {
	want, err := New(d.Spec)
	if err != nil {
		return err
	}
	if !equal(d, want) {
		return fmt.Errorf("payload: %s arrived changed", d.Spec)
	}
	return nil
}
