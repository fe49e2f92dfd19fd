package memexp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ibisgo/ibis/serialization"
)

// Defaults of SerializationParams: the rows of Table 6.2 of the thesis.
var (
	DefaultSerializationArrays = []Elem{ElemByte, ElemInt32, ElemInt64, ElemFloat64}
)

const (
	// DefaultArrayBytes is the size of the arrays (100 KiB).
	DefaultArrayBytes = 100 << 10
	// DefaultTreeNodes is the size of the tree: a complete binary tree
	// of ten levels.
	DefaultTreeNodes = 1023
)

// SerializationParams says what the serialization experiment measures.
// Zero fields take the defaults.
type SerializationParams struct {
	// ArrayBytes is the size of each array in bytes (default 100 KiB),
	// rounded down to whole elements.
	ArrayBytes int
	// Arrays are the element types of the arrays (default byte, int32,
	// int64, float64).
	Arrays []Elem
	// TreeNodes is the number of objects in the tree (default 1023).
	TreeNodes int
	// NoTree leaves the tree out.
	NoTree bool
	// Kinds are the serializations (default data and object; byte is not
	// allowed: it cannot send int arrays or trees).
	Kinds []serialization.Kind
	// Orders are the byte orders (default native and swapped).
	Orders []Order
	// CopySink makes the writes copy every message into memory instead of
	// only counting its bytes (see ConversionParams.CopySink).
	CopySink bool
}

// SerializationCase is the measurement of writing or reading one payload
// with one serialization.
type SerializationCase struct {
	// Payload names what is sent: "byte[]", "int32[]", ..., or "tree".
	Payload string
	// Elem is the element type of an array payload.
	Elem Elem
	// Nodes is the object count of the tree payload (0 for arrays).
	Nodes int
	// Serialization is "data" or "object".
	Serialization string
	Order         Order
	Dir           Direction
	// UserBytes is the user data per message: the array, or 16 bytes per
	// tree node. WireBytes is the whole message, headers, references,
	// lengths and type tags included.
	UserBytes, WireBytes int64
	Measurement
	// UserMBps and TotalMBps are the throughputs of user and wire bytes at
	// the reported time, in 10^6 B/s.
	UserMBps, TotalMBps float64
}

// SerializationResult is the outcome of Serialization: the parameters
// actually used, how it was measured, and one case per payload,
// serialization, order and direction, in that nesting order.
type SerializationResult struct {
	Params      SerializationParams
	NativeOrder string
	Repetitions int
	MinBatchNs  int64
	Statistic   string
	Cases       []SerializationCase
}

// Find returns the case with the given coordinates; kind is "data" or
// "object".
func (r *SerializationResult) Find(payload, kind string, o Order, d Direction) (SerializationCase, bool) {
	for _, c := range r.Cases {
		if c.Payload == payload && c.Serialization == kind && c.Order == o && c.Dir == d {
			return c, true
		}
	}
	return SerializationCase{}, false
}

// TreePayload is the Payload name of the tree.
const TreePayload = "tree"

// ArrayPayload returns the Payload name of an array of e ("int32[]").
func ArrayPayload(e Elem) string { return e.String() + "[]" }

func (p SerializationParams) normalize() (SerializationParams, error) {
	if p.ArrayBytes == 0 {
		p.ArrayBytes = DefaultArrayBytes
	}
	if len(p.Arrays) == 0 {
		p.Arrays = slices.Clone(DefaultSerializationArrays)
	}
	if p.TreeNodes == 0 {
		p.TreeNodes = DefaultTreeNodes
	}
	if len(p.Kinds) == 0 {
		p.Kinds = []serialization.Kind{serialization.KindData, serialization.KindObject}
	}
	if len(p.Orders) == 0 {
		p.Orders = []Order{OrderNative, OrderSwapped}
	}
	for _, e := range p.Arrays {
		if !e.valid() {
			return p, fmt.Errorf("%w: array element type %v", ErrInvalid, e)
		}
		if p.ArrayBytes < e.Size() || p.ArrayBytes > MaxBytes {
			return p, fmt.Errorf("%w: array size %d bytes for %v, want %d to %d", ErrInvalid, p.ArrayBytes, e, e.Size(), MaxBytes)
		}
	}
	if !p.NoTree && (p.TreeNodes < 1 || p.TreeNodes > MaxTreeNodes) {
		return p, fmt.Errorf("%w: tree of %d nodes, want 1 to %d", ErrInvalid, p.TreeNodes, MaxTreeNodes)
	}
	for _, k := range p.Kinds {
		if k != serialization.KindData && k != serialization.KindObject {
			return p, fmt.Errorf("%w: serialization %v, want data or object", ErrInvalid, k)
		}
	}
	for _, o := range p.Orders {
		if !o.valid() {
			return p, fmt.Errorf("%w: byte order %v", ErrInvalid, o)
		}
	}
	return p, nil
}

// ParseKinds parses a comma-separated list of "data" and "object".
func ParseKinds(list string) ([]serialization.Kind, error) {
	return parseList(list, "serializations", func(s string) (serialization.Kind, error) {
		for _, k := range []serialization.Kind{serialization.KindData, serialization.KindObject} {
			if strings.ToLower(strings.TrimSpace(s)) == k.String() {
				return k, nil
			}
		}
		return 0, fmt.Errorf("%w: serialization %q, want data or object", ErrInvalid, s)
	})
}

// Serialization measures the throughput of serializing payloads into one
// message in memory and deserializing them back, per payload,
// serialization and byte order: Table 6.2 of the thesis. Arrays go with
// WriteArray/ReadArray (data) or WriteObject/ReadObject (object); the tree
// with a hand-written serializer of int32 fields and references (data) or
// as one object through the object codec (object). It returns an error wrapping
// ErrInvalid for bad parameters, ErrMismatch if a case does not round-trip,
// or the context's error if ctx ends first.
func Serialization(ctx context.Context, p SerializationParams, opts ...Option) (*SerializationResult, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if p, err = p.normalize(); err != nil {
		return nil, err
	}
	res := &SerializationResult{
		Params:      p,
		NativeOrder: serialization.NativeOrder().String(),
		Repetitions: cfg.reps,
		MinBatchNs:  cfg.minBatch.Nanoseconds(),
		Statistic:   cfg.stat.String(),
	}
	payloads := len(p.Arrays)
	if !p.NoTree {
		payloads++
	}
	groups := payloads * len(p.Kinds)
	for i := range payloads {
		for _, k := range p.Kinds {
			// One group per payload and serialization: its orders and
			// directions take turns (see measureGroup).
			var cases []SerializationCase
			var bs []*bench
			for _, o := range p.Orders {
				for _, d := range []Direction{Write, Read} {
					sc, b, err := serializationBench(p, i, k, o, d)
					if err != nil {
						return nil, err
					}
					cases, bs = append(cases, sc), append(bs, b)
				}
			}
			cfg.progress("serialization %d/%d: %s %s (%d cases)", len(res.Cases)/len(bs)+1, groups, cases[0].Payload, k, len(bs))
			ms, err := measureGroup(ctx, cfg, bs)
			if err != nil {
				return nil, err
			}
			for j, sc := range cases {
				sc.Measurement = ms[j]
				sc.UserMBps = ms[j].MBps(sc.UserBytes)
				sc.TotalMBps = ms[j].MBps(sc.WireBytes)
				res.Cases = append(res.Cases, sc)
			}
		}
	}
	return res, nil
}

// serializationBench builds the case of payload i (an index into p.Arrays,
// or the tree after them).
func serializationBench(p SerializationParams, i int, k serialization.Kind, o Order, d Direction) (SerializationCase, *bench, error) {
	sc := SerializationCase{Serialization: k.String(), Order: o, Dir: d}
	object := k == serialization.KindObject
	var pl payload
	if i < len(p.Arrays) {
		e := p.Arrays[i]
		n := p.ArrayBytes / e.Size()
		sc.Payload, sc.Elem, sc.UserBytes = ArrayPayload(e), e, int64(n*e.Size())
		pl = arrayPayloadOf(e, sc.Payload, n, object, uint64(e)<<32|uint64(n))
	} else {
		sc.Payload, sc.Nodes, sc.UserBytes = TreePayload, p.TreeNodes, int64(p.TreeNodes)*nodeUserBytes
		pl = newTreePayload(p.TreeNodes, object, uint64(p.TreeNodes))
	}
	name := fmt.Sprintf("%s %s %s %s", sc.Payload, sc.Serialization, d, o)
	if sc.Nodes > 0 {
		name = fmt.Sprintf("tree of %d %s %s %s", sc.Nodes, sc.Serialization, d, o)
	}
	var b *bench
	var err error
	if d == Write {
		b, sc.WireBytes, err = streamWrite(name, pl, k, o, p.CopySink)
	} else {
		b, sc.WireBytes, err = streamRead(name, pl, k, o)
	}
	return sc, b, err
}

// arrayPayloadOf returns an array payload of n elements of type e.
func arrayPayloadOf(e Elem, name string, n int, object bool, seed uint64) payload {
	switch e {
	case ElemByte:
		return newArrayPayload[byte](name, n, object, seed)
	case ElemInt16:
		return newArrayPayload[int16](name, n, object, seed)
	case ElemInt32:
		return newArrayPayload[int32](name, n, object, seed)
	case ElemInt64:
		return newArrayPayload[int64](name, n, object, seed)
	case ElemFloat32:
		return newArrayPayload[float32](name, n, object, seed)
	default:
		return newArrayPayload[float64](name, n, object, seed)
	}
}
