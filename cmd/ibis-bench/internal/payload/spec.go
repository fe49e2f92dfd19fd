package payload

import (
	"errors"
	"fmt"
	"strings"
)

// Kind is the shape and element type of a payload.
type Kind uint8

// The payload kinds.
const (
	Bytes          Kind = iota + 1 // []byte of Size bytes
	Int32                          // []int32 of Size/4 elements
	Int64                          // []int64 of Size/8 elements
	Float32                        // []float32 of Size/4 elements
	Float64                        // []float64 of Size/8 elements
	Objects                        // []Item (four int32 each) of Size/16 items, as one object
	Tree                           // a binary tree of Size/16 Nodes (four int32 each), as one object
	Bytes2D                        // [][]byte: Rows rows of Size/Rows bytes
	Float322D                      // [][]float32: Rows rows of Size/(4*Rows) elements
	ObjectsMsgpack                 // Objects through msgpack (MsgpackItem): the object path before the codec
	TreeMsgpack                    // Tree through msgpack (MsgpackNode)
	maxKind
)

var kindNames = map[Kind]string{
	Bytes: "bytes", Int32: "int32", Int64: "int64", Float32: "float32", Float64: "float64",
	Objects: "objects", Tree: "tree", Bytes2D: "bytes2d", Float322D: "float32-2d",
	ObjectsMsgpack: "objects-msgpack", TreeMsgpack: "tree-msgpack",
}

// String returns the kind's name as the command line spells it.
func (k Kind) String() string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParseKind returns the kind with the given name.
func ParseKind(name string) (Kind, error) {
	for k, n := range kindNames {
		if n == name {
			return k, nil
		}
	}
	var all []string
	for k := Kind(1); k < maxKind; k++ {
		all = append(all, k.String())
	}
	return 0, fmt.Errorf("%w: unknown payload kind %q (have %s)", ErrSpec, name, strings.Join(all, ", "))
}

// ElemSize returns the size in bytes of one element (item, node) of the kind.
func (k Kind) ElemSize() int {
	switch k {
	case Bytes, Bytes2D:
		return 1
	case Int32, Float32, Float322D:
		return 4
	case Int64, Float64:
		return 8
	case Objects, Tree, ObjectsMsgpack, TreeMsgpack:
		return ItemSize
	}
	return 0
}

// IsObject reports whether the kind goes through WriteObject (object serialization).
func (k Kind) IsObject() bool {
	return k == Objects || k == Tree || k == ObjectsMsgpack || k == TreeMsgpack
}

// IsTree reports whether the kind is a tree of nodes (through the codec or msgpack).
func (k Kind) IsTree() bool { return k == Tree || k == TreeMsgpack }

// ErrSpec: a payload specification is invalid (unknown kind, size out of range,
// shape that does not divide).
var ErrSpec = errors.New("payload: invalid spec")

// MaxSize bounds the user bytes of one payload, so that a peer never allocates
// more than this on a spec it received.
const MaxSize = 64 << 20

// Spec names one payload: its kind, its user-data size in bytes and, for 2-D
// kinds, its number of rows.
type Spec struct {
	Kind Kind
	Size int
	Rows int
}

// Elems returns the number of elements (items, nodes) of the payload.
func (s Spec) Elems() int { return s.Size / s.Kind.ElemSize() }

// String describes the spec, e.g. "float64 1048576B" or "float32-2d 1024x1024".
func (s Spec) String() string {
	if s.Rows > 0 {
		return fmt.Sprintf("%s %dx%d", s.Kind, s.Rows, s.Elems()/max(s.Rows, 1))
	}
	return fmt.Sprintf("%s %dB", s.Kind, s.Size)
}

// Validate checks the spec: a known kind, 0 <= Size <= MaxSize, a whole number of
// elements, and for 2-D kinds at least one row and equal rows.
func (s Spec) Validate() error {
	if s.Kind == 0 || s.Kind >= maxKind {
		return fmt.Errorf("%w: kind %d", ErrSpec, uint8(s.Kind))
	}
	if s.Size < 0 || s.Size > MaxSize {
		return fmt.Errorf("%w: size %d outside 0..%d", ErrSpec, s.Size, MaxSize)
	}
	if s.Size%s.Kind.ElemSize() != 0 {
		return fmt.Errorf("%w: %s size %d is not a multiple of %d", ErrSpec, s.Kind, s.Size, s.Kind.ElemSize())
	}
	switch s.Kind {
	case Bytes2D, Float322D:
		if s.Rows < 1 || s.Rows > s.Elems() || s.Elems()%s.Rows != 0 {
			return fmt.Errorf("%w: %d elements do not make %d equal rows", ErrSpec, s.Elems(), s.Rows)
		}
	default:
		if s.Rows != 0 {
			return fmt.Errorf("%w: %s has no rows", ErrSpec, s.Kind)
		}
	}
	if s.Kind.IsTree() && s.Elems() == 0 {
		return fmt.Errorf("%w: a tree needs at least one node", ErrSpec)
	}
	return nil
}
