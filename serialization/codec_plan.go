package serialization

import (
	"encoding"
	"errors"
	"fmt"
	"hash/fnv"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// A codec plan says how the object codec encodes and decodes one Go type:
// built once per type by reflection, cached, and then followed without
// further reflection for everything except maps. See codec.go for the wire
// format and the rules of what the codec covers.

// planKind is how a value of a planned type travels.
type planKind uint8

const (
	pkFlat   planKind = iota // its memory is its wire bytes (little-endian host, no padding, no bool)
	pkFixed                  // a number whose bytes are swapped to little endian (big-endian host)
	pkBool                   // one byte, 0 or 1
	pkString                 // uvarint length, bytes
	pkStruct                 // its fields in order
	pkArray                  // its elements in order
	pkSlice                  // uvarint 0 (nil) or length+1, elements
	pkMap                    // uvarint 0 (nil) or length+1, key and value pairs
	pkPtr                    // uvarint 0 (nil), 1 (a new object, queued), or handle+2
)

// codecPlan is the compiled codec of one type.
type codecPlan struct {
	t    reflect.Type
	kind planKind
	size uintptr // t.Size()
	esz  uintptr // pkFixed: bytes per swapped unit
	// minWire is the fewest wire bytes a value of the type takes; the decoder
	// checks a length against it before it allocates.
	minWire int64
	fields  []fieldPlan // pkStruct, flat runs of adjacent fields merged
	named   []namedPlan // pkStruct: every encoded field, for describe
	elem    *codecPlan  // pkArray, pkSlice, pkPtr; pkMap: the value
	key     *codecPlan  // pkMap
	n       int         // pkArray: the length
	desc    string      // the structural description the fingerprint hashes
	fp      uint64      // FNV-64a of desc: the type on the wire
	name    string      // codecName of t: what a codec object of this type carries
	// viaCodec says WriteObject uses the codec for a value of this type: it
	// reaches a struct. Slices and maps of primitives and strings stay with
	// msgpack, which a receiver can read into *any without registration.
	viaCodec bool
}

// fieldPlan is one encoded field of a struct (or a run of flat ones).
type fieldPlan struct {
	off uintptr
	p   *codecPlan
}

// namedPlan is an encoded field of a struct by name.
type namedPlan struct {
	name string
	p    *codecPlan
}

// errNoCodec says why a type is left to msgpack; WriteObject falls back on it
// and ReadObject of a codec object into such a type is a mismatch.
var errNoCodec = errors.New("not covered by the object codec")

// planCache maps reflect.Type to *codecPlan, or to the error saying why the type
// has none. Building takes planMu, so that a recursive type is built once.
var (
	planCache sync.Map
	planMu    sync.Mutex
)

// Interfaces whose implementation makes msgpack encode a value its own way;
// a type implementing one is left to msgpack so that it keeps doing so.
var customCodecs = []reflect.Type{
	reflect.TypeFor[msgpack.CustomEncoder](),
	reflect.TypeFor[msgpack.CustomDecoder](),
	reflect.TypeFor[msgpack.Marshaler](),
	reflect.TypeFor[msgpack.Unmarshaler](),
	reflect.TypeFor[encoding.BinaryMarshaler](),
	reflect.TypeFor[encoding.BinaryUnmarshaler](),
	reflect.TypeFor[encoding.TextMarshaler](),
	reflect.TypeFor[encoding.TextUnmarshaler](),
}

// planFor returns the plan of t, building and caching it (with the plans of
// every type it reaches) on first use.
func planFor(t reflect.Type) (*codecPlan, error) {
	if v, ok := planCache.Load(t); ok {
		return cached(v)
	}
	planMu.Lock()
	defer planMu.Unlock()
	if v, ok := planCache.Load(t); ok {
		return cached(v)
	}
	b := planBuilder{building: map[reflect.Type]*codecPlan{}}
	p, err := b.build(t)
	if err != nil {
		// Only the failing root is remembered: the plans built on the way
		// may be incomplete (a recursive type refers to itself).
		planCache.Store(t, err)
		return nil, err
	}
	for _, bp := range b.order {
		bp.desc = describe(bp, nil)
		h := fnv.New64a()
		h.Write([]byte(bp.desc))
		bp.fp = h.Sum64()
		bp.name = codecName(bp.t)
	}
	for _, bp := range b.order {
		bp.viaCodec = reachesStruct(bp, map[*codecPlan]bool{})
	}
	for _, bp := range b.order {
		planCache.Store(bp.t, bp)
	}
	return p, nil
}

// reachesStruct reports whether a value of plan p may hold a struct.
func reachesStruct(p *codecPlan, seen map[*codecPlan]bool) bool {
	if p == nil || seen[p] {
		return false
	}
	seen[p] = true
	if p.t.Kind() == reflect.Struct {
		return true
	}
	return reachesStruct(p.elem, seen) || reachesStruct(p.key, seen)
}

// cached unpacks a planCache entry.
func cached(v any) (*codecPlan, error) {
	if err, ok := v.(error); ok {
		return nil, err
	}
	return v.(*codecPlan), nil
}

// planBuilder builds the plans of one root type. building holds the plans
// under construction, so a recursive type refers to its own plan.
type planBuilder struct {
	building map[reflect.Type]*codecPlan
	order    []*codecPlan
}

// build returns the plan of t.
func (b *planBuilder) build(t reflect.Type) (*codecPlan, error) {
	if v, ok := planCache.Load(t); ok {
		return cached(v)
	}
	if p, ok := b.building[t]; ok {
		return p, nil
	}
	for _, c := range customCodecs {
		if t.Implements(c) || reflect.PointerTo(t).Implements(c) {
			return nil, fmt.Errorf("%w: %s implements %s", errNoCodec, t, c)
		}
	}
	p := &codecPlan{t: t, size: t.Size(), minWire: 1}
	b.building[t] = p
	b.order = append(b.order, p)
	var err error
	switch k := t.Kind(); k {
	case reflect.Bool:
		p.kind = pkBool
	case reflect.Int8, reflect.Uint8, reflect.Int16, reflect.Uint16, reflect.Int32, reflect.Uint32,
		reflect.Int64, reflect.Uint64, reflect.Int, reflect.Uint, reflect.Float32, reflect.Float64:
		b.number(p, p.size)
	case reflect.Complex64, reflect.Complex128:
		b.number(p, p.size/2)
	case reflect.String:
		p.kind = pkString
	case reflect.Pointer:
		p.kind = pkPtr
		p.elem, err = b.build(t.Elem())
	case reflect.Slice:
		p.kind = pkSlice
		p.elem, err = b.build(t.Elem())
	case reflect.Map:
		p.kind = pkMap
		if p.key, err = b.build(t.Key()); err == nil {
			p.elem, err = b.build(t.Elem())
		}
	case reflect.Array:
		err = b.array(p)
	case reflect.Struct:
		err = b.structure(p)
	default:
		err = fmt.Errorf("%w: %s is a %s", errNoCodec, t, k)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// number plans an integer, float or complex type of unit bytes per part.
func (b *planBuilder) number(p *codecPlan, unit uintptr) {
	p.minWire = int64(p.size)
	if nativeLittle || unit == 1 {
		p.kind = pkFlat
		return
	}
	p.kind, p.esz = pkFixed, unit
}

// array plans [n]T: flat when T is, else element by element.
func (b *planBuilder) array(p *codecPlan) error {
	e, err := b.build(p.t.Elem())
	if err != nil {
		return err
	}
	p.elem, p.n = e, p.t.Len()
	p.minWire = int64(p.n) * e.minWire
	if e.kind == pkFlat {
		p.kind = pkFlat
		return nil
	}
	p.kind = pkArray
	return nil
}

// structure plans a struct: its exported fields (and embedded structs) in
// declaration order, adjacent flat fields without padding between them
// merged into one copy. A struct whose every byte is such a field is flat.
func (b *planBuilder) structure(p *codecPlan) error {
	p.kind = pkStruct
	p.minWire = 0
	var end uintptr // the end of the last merged flat run
	covered := uintptr(0)
	for i := range p.t.NumField() {
		f := p.t.Field(i)
		if tag, ok := f.Tag.Lookup("msgpack"); ok {
			return fmt.Errorf("%w: field %s of %s has a msgpack tag %q (left to msgpack)", errNoCodec, f.Name, p.t, tag)
		}
		if !f.IsExported() && !(f.Anonymous && f.Type.Kind() == reflect.Struct) {
			continue
		}
		fp, err := b.build(f.Type)
		if err != nil {
			return fmt.Errorf("field %s of %s: %w", f.Name, p.t, err)
		}
		p.minWire += fp.minWire
		p.named = append(p.named, namedPlan{f.Name, fp})
		if fp.kind == pkFlat {
			covered += fp.size
			if n := len(p.fields); n > 0 && p.fields[n-1].p.kind == pkFlat && end == f.Offset {
				last := &p.fields[n-1]
				last.p = flatRun(last.p.size + fp.size)
				end += fp.size
				continue
			}
			end = f.Offset + fp.size
		}
		p.fields = append(p.fields, fieldPlan{off: f.Offset, p: fp})
	}
	if len(p.fields) == 1 && p.fields[0].p.kind == pkFlat && covered == p.size && p.fields[0].off == 0 {
		p.kind, p.fields = pkFlat, nil
	}
	if len(p.fields) == 0 && p.size == 0 {
		p.kind = pkFlat
	}
	return nil
}

// flatRuns caches the plans of merged runs of flat struct fields by length.
var flatRuns sync.Map

// flatRun returns a flat plan of n bytes (not a Go type of its own).
func flatRun(n uintptr) *codecPlan {
	if v, ok := flatRuns.Load(n); ok {
		return v.(*codecPlan)
	}
	v, _ := flatRuns.LoadOrStore(n, &codecPlan{kind: pkFlat, size: n, minWire: int64(n)})
	return v.(*codecPlan)
}

// describe returns the structural description of p: what both ends must
// agree on. It names kinds, sizes and field names, not Go type names, so two
// programs with the same declarations (or different names for the same
// shape) exchange values. stack holds the plans being described, so that a
// recursive type refers back to itself by depth.
func describe(p *codecPlan, stack []*codecPlan) string {
	for i, s := range stack {
		if s == p {
			return "#" + strconv.Itoa(len(stack)-1-i)
		}
	}
	stack = append(stack, p)
	t := p.t
	switch t.Kind() {
	case reflect.Bool:
		return "b"
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		return "i" + strconv.Itoa(int(8*t.Size()))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		return "u" + strconv.Itoa(int(8*t.Size()))
	case reflect.Float32, reflect.Float64:
		return "f" + strconv.Itoa(int(8*t.Size()))
	case reflect.Complex64, reflect.Complex128:
		return "c" + strconv.Itoa(int(8*t.Size()))
	case reflect.String:
		return "s"
	case reflect.Pointer:
		return "P(" + describe(p.elem, stack) + ")"
	case reflect.Slice:
		return "S(" + describe(p.elem, stack) + ")"
	case reflect.Map:
		return "M(" + describe(p.key, stack) + "," + describe(p.elem, stack) + ")"
	case reflect.Array:
		return "A" + strconv.Itoa(t.Len()) + "(" + describe(p.elem, stack) + ")"
	}
	var sb strings.Builder
	sb.WriteString("T{")
	for _, f := range p.named {
		sb.WriteString(f.name)
		sb.WriteByte(':')
		sb.WriteString(describe(f.p, stack))
		sb.WriteByte(';')
	}
	sb.WriteByte('}')
	return sb.String()
}

// unsafeSlice is the memory layout of a Go slice header.
type unsafeSlice struct {
	data unsafe.Pointer
	len  int
	cap  int
}
