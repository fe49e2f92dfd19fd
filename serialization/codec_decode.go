package serialization

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"unsafe"
)

// allocOverhead is what the decoder charges every allocation beyond its
// size, so that many tiny objects are bounded as well as a few large ones.
const allocOverhead = 16

// decoder rebuilds a value from codec bytes. Every length is checked
// against the bytes left before anything is allocated, every allocation is
// charged against mem, and a reference may only name an object of the type
// it was sent as.
type decoder struct {
	b        []byte
	off      int
	mem      int64 // allocation budget left
	limit    int64 // the budget at the start, for error messages
	refs     []queued
	queue    []queued
	pending  int64 // the fewest bytes the queued objects still need
	depth    int
	maxDepth int
}

// reset prepares the decoder for the bytes of one object.
func (d *decoder) reset(b []byte, mem int64, maxDepth int) {
	d.b, d.off = b, 0
	d.mem, d.limit = mem, mem
	clear(d.refs)
	d.refs = d.refs[:0]
	clear(d.queue)
	d.queue = d.queue[:0]
	d.pending, d.depth, d.maxDepth = 0, 0, maxDepth
	if cap(d.refs) > maxRetainedRefs {
		d.refs = nil
	}
	if cap(d.queue) > maxRetainedRefs {
		d.queue = nil
	}
}

// decodeRoot decodes the value at p, of plan pl, then every object it
// referred to, and checks that no byte is left over.
func (d *decoder) decodeRoot(p unsafe.Pointer, pl *codecPlan, byPointer bool) error {
	if byPointer {
		d.refs = append(d.refs, queued{p, pl})
	}
	if err := d.decode(p, pl); err != nil {
		return err
	}
	for i := 0; i < len(d.queue); i++ {
		q := d.queue[i]
		d.pending -= q.pl.minWire
		if err := d.decode(q.p, q.pl); err != nil {
			return err
		}
	}
	if d.off != len(d.b) {
		return corruptf("object codec: %d bytes left after the value", len(d.b)-d.off)
	}
	return nil
}

// left returns the bytes not yet decoded.
func (d *decoder) left() int64 { return int64(len(d.b) - d.off) }

// take returns the next n bytes.
func (d *decoder) take(n uintptr, what string) ([]byte, error) {
	if uint64(n) > uint64(len(d.b)-d.off) {
		return nil, corruptf("object codec: %s needs %d bytes, %d left", what, n, len(d.b)-d.off)
	}
	b := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return b, nil
}

// uvarint reads an unsigned varint.
func (d *decoder) uvarint(what string) (uint64, error) {
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		return 0, corruptf("object codec: bad %s varint", what)
	}
	d.off += n
	return v, nil
}

// charge takes n bytes from the allocation budget.
func (d *decoder) charge(n int64, what string) error {
	n += allocOverhead
	if n > d.mem {
		return fmt.Errorf("%w: object codec: %s would bring the object's memory over %d bytes (WithReaderMaxObjectMemory)", ErrTooLarge, what, d.limit)
	}
	d.mem -= n
	return nil
}

// count reads a length announced for n values of at least minWire bytes
// each, plus what the queued objects still need, and checks that the bytes
// left can hold them. It returns -1 for nil.
func (d *decoder) count(minWire int64, what string) (int, error) {
	v, err := d.uvarint(what + " length")
	if err != nil || v == 0 {
		return -1, err
	}
	n := v - 1
	room := d.left() - d.pending
	if minWire > 0 && n > uint64(max(room, 0))/uint64(minWire) || n > math.MaxInt32 && minWire == 0 {
		return 0, corruptf("object codec: %s of %d elements does not fit the %d bytes left", what, n, d.left())
	}
	return int(n), nil
}

// decode reads one value into p.
func (d *decoder) decode(p unsafe.Pointer, pl *codecPlan) error {
	switch pl.kind {
	case pkFlat:
		b, err := d.take(pl.size, "a value")
		if err != nil {
			return err
		}
		copy(unsafe.Slice((*byte)(p), pl.size), b)
	case pkFixed:
		return d.fixed(p, pl)
	case pkBool:
		b, err := d.take(1, "a bool")
		if err != nil {
			return err
		}
		if b[0] > 1 {
			return corruptf("object codec: bool byte %d", b[0])
		}
		*(*bool)(p) = b[0] == 1
	case pkString:
		n, err := d.uvarint("string length")
		if err != nil {
			return err
		}
		if n > uint64(d.left()) {
			return corruptf("object codec: string of %d bytes, %d left", n, d.left())
		}
		if err := d.charge(int64(n), "a string"); err != nil {
			return err
		}
		b, _ := d.take(uintptr(n), "a string")
		*(*string)(p) = string(b)
	case pkStruct:
		for _, f := range pl.fields {
			if err := d.decode(unsafe.Add(p, f.off), f.p); err != nil {
				return err
			}
		}
	case pkArray:
		return d.elems(p, pl.elem, pl.n)
	case pkSlice:
		return d.slice(p, pl)
	case pkMap:
		return d.mapValue(p, pl)
	case pkPtr:
		return d.pointer(p, pl.elem)
	}
	return nil
}

// deeper enters one more level of slices and maps; the caller leaves it.
func (d *decoder) deeper() error {
	if d.depth >= d.maxDepth {
		return corruptf("object codec: slices and maps nested more than %d deep (WithReaderMaxObjectDepth)", d.maxDepth)
	}
	d.depth++
	return nil
}

// elems decodes n elements of plan pl into the memory at p.
func (d *decoder) elems(p unsafe.Pointer, pl *codecPlan, n int) error {
	if pl.kind == pkFlat {
		b, err := d.take(uintptr(n)*pl.size, "an array")
		if err != nil {
			return err
		}
		copy(unsafe.Slice((*byte)(p), uintptr(n)*pl.size), b)
		return nil
	}
	for i := range n {
		if err := d.decode(unsafe.Add(p, uintptr(i)*pl.size), pl); err != nil {
			return err
		}
	}
	return nil
}

// slice decodes a slice into the slice header at p.
func (d *decoder) slice(p unsafe.Pointer, pl *codecPlan) error {
	n, err := d.count(pl.elem.minWire, "a slice")
	if err != nil {
		return err
	}
	if n < 0 {
		*(*unsafeSlice)(p) = unsafeSlice{}
		return nil
	}
	if err := d.charge(int64(n)*int64(pl.elem.size), "a slice"); err != nil {
		return err
	}
	if err := d.deeper(); err != nil {
		return err
	}
	defer func() { d.depth-- }()
	s := reflect.MakeSlice(pl.t, n, n)
	data := s.UnsafePointer()
	*(*unsafeSlice)(p) = unsafeSlice{data, n, n}
	return d.elems(data, pl.elem, n)
}

// mapValue decodes a map into the map variable at p.
func (d *decoder) mapValue(p unsafe.Pointer, pl *codecPlan) error {
	n, err := d.count(pl.key.minWire+pl.elem.minWire, "a map")
	if err != nil {
		return err
	}
	m := reflect.NewAt(pl.t, p).Elem()
	if n < 0 {
		m.SetZero()
		return nil
	}
	// A map entry costs its key and value and about as much again in the
	// table's slots and growth room.
	if err := d.charge(2*int64(n)*int64(pl.key.size+pl.elem.size), "a map"); err != nil {
		return err
	}
	if err := d.deeper(); err != nil {
		return err
	}
	defer func() { d.depth-- }()
	mv := reflect.MakeMapWithSize(pl.t, n)
	m.Set(mv)
	k := reflect.New(pl.key.t)
	v := reflect.New(pl.elem.t)
	for range n {
		if err := d.decode(k.UnsafePointer(), pl.key); err != nil {
			return err
		}
		if err := d.decode(v.UnsafePointer(), pl.elem); err != nil {
			return err
		}
		mv.SetMapIndex(k.Elem(), v.Elem())
	}
	return nil
}

// pointer decodes a reference into the pointer variable at p, whose target
// has plan pl.
func (d *decoder) pointer(p unsafe.Pointer, pl *codecPlan) error {
	h, err := d.uvarint("reference")
	if err != nil {
		return err
	}
	switch h {
	case 0:
		*(*unsafe.Pointer)(p) = nil
		return nil
	case 1:
		if pl.minWire > d.left()-d.pending {
			return corruptf("object codec: a new %s needs %d bytes, %d left", pl.t, pl.minWire, d.left()-d.pending)
		}
		if uint64(len(d.refs)) >= math.MaxUint32 {
			return corruptf("object codec: too many objects")
		}
		if err := d.charge(int64(pl.size), "an object"); err != nil {
			return err
		}
		q := reflect.New(pl.t).UnsafePointer()
		d.refs = append(d.refs, queued{q, pl})
		d.queue = append(d.queue, queued{q, pl})
		d.pending += pl.minWire
		*(*unsafe.Pointer)(p) = q
		return nil
	}
	h -= 2
	if h >= uint64(len(d.refs)) {
		return corruptf("object codec: reference to object %d of %d", h, len(d.refs))
	}
	r := d.refs[h]
	if r.pl != pl {
		return corruptf("object codec: object %d is a %s, referred to as a %s", h, r.pl.t, pl.t)
	}
	*(*unsafe.Pointer)(p) = r.p
	return nil
}

// fixed decodes a little-endian number on a big-endian host.
func (d *decoder) fixed(p unsafe.Pointer, pl *codecPlan) error {
	b, err := d.take(pl.size, "a number")
	if err != nil {
		return err
	}
	for i := uintptr(0); i < pl.size; i += pl.esz {
		q := unsafe.Add(p, i)
		switch pl.esz {
		case 2:
			*(*uint16)(q) = binary.LittleEndian.Uint16(b[i:])
		case 4:
			*(*uint32)(q) = binary.LittleEndian.Uint32(b[i:])
		default:
			*(*uint64)(q) = binary.LittleEndian.Uint64(b[i:])
		}
	}
	return nil
}
