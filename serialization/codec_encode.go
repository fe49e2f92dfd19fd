package serialization

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"unsafe"
)

// maxEncodeDepth bounds how deeply the encoder nests slices and maps (the
// only data-dependent recursion: pointers are queued, not followed), so a
// slice that contains itself is an error, not a stack overflow.
const maxEncodeDepth = 1 << 12

// maxRetainedRefs is the largest object queue (and decoder reference list)
// kept for the next message.
const maxRetainedRefs = 1 << 12

// queued is an object whose handle was sent and whose value is still to
// come: the codec writes the objects a value points to after the value,
// breadth first, so a long list does not recurse.
type queued struct {
	p  unsafe.Pointer
	pl *codecPlan
}

// encoder appends the codec encoding of values to buf.
type encoder struct {
	buf   []byte
	refs  refTable // objects sent, by address and plan (two types may share an address)
	next  uint32   // the next handle
	queue []queued
	depth int
}

// reset prepares the encoder for the next object.
func (e *encoder) reset() {
	e.buf = e.buf[:0]
	e.refs.reset()
	e.next = 0
	clear(e.queue)
	e.queue = e.queue[:0]
	if cap(e.queue) > maxRetainedRefs {
		e.queue = nil
	}
	e.depth = 0
}

// encodeRoot encodes the value at p of plan pl and every object it reaches.
// byPointer says the value was given by pointer: it is then object 0, so
// references back to it are kept.
func (e *encoder) encodeRoot(p unsafe.Pointer, pl *codecPlan, byPointer bool) error {
	if byPointer {
		e.refs.handle(uintptr(p), pl, 0)
		e.next = 1
	}
	if err := e.encode(p, pl); err != nil {
		return err
	}
	for i := 0; i < len(e.queue); i++ {
		q := e.queue[i]
		if err := e.encode(q.p, q.pl); err != nil {
			return err
		}
	}
	return nil
}

// encode appends the value at p.
func (e *encoder) encode(p unsafe.Pointer, pl *codecPlan) error {
	switch pl.kind {
	case pkFlat:
		e.buf = append(e.buf, unsafe.Slice((*byte)(p), pl.size)...)
	case pkFixed:
		e.fixed(p, pl)
	case pkBool:
		b := byte(0)
		if *(*bool)(p) {
			b = 1
		}
		e.buf = append(e.buf, b)
	case pkString:
		s := *(*string)(p)
		e.buf = binary.AppendUvarint(e.buf, uint64(len(s)))
		e.buf = append(e.buf, s...)
	case pkStruct:
		for _, f := range pl.fields {
			if err := e.encode(unsafe.Add(p, f.off), f.p); err != nil {
				return err
			}
		}
	case pkArray:
		return e.elems(p, pl.elem, pl.n)
	case pkSlice:
		s := (*unsafeSlice)(p)
		if s.data == nil {
			e.buf = append(e.buf, 0)
			return nil
		}
		e.buf = binary.AppendUvarint(e.buf, uint64(s.len)+1)
		if err := e.deeper(); err != nil {
			return err
		}
		err := e.elems(s.data, pl.elem, s.len)
		e.depth--
		return err
	case pkMap:
		if err := e.deeper(); err != nil {
			return err
		}
		err := e.mapValue(p, pl)
		e.depth--
		return err
	case pkPtr:
		e.pointer(*(*unsafe.Pointer)(p), pl.elem)
	}
	return nil
}

// deeper enters one more level of slices and maps, failing past
// maxEncodeDepth; the caller leaves it with e.depth--.
func (e *encoder) deeper() error {
	if e.depth >= maxEncodeDepth {
		return fmt.Errorf("%w: WriteObject: slices and maps nested more than %d deep (does a slice contain itself?)", ErrTooLarge, maxEncodeDepth)
	}
	e.depth++
	return nil
}

// elems appends n elements of plan pl starting at p.
func (e *encoder) elems(p unsafe.Pointer, pl *codecPlan, n int) error {
	if pl.kind == pkFlat {
		e.buf = append(e.buf, unsafe.Slice((*byte)(p), uintptr(n)*pl.size)...)
		return nil
	}
	for i := range n {
		if err := e.encode(unsafe.Add(p, uintptr(i)*pl.size), pl); err != nil {
			return err
		}
	}
	return nil
}

// pointer appends a reference to the object at q: nil, a handle sent
// before, or a new object whose value is queued.
func (e *encoder) pointer(q unsafe.Pointer, pl *codecPlan) {
	if q == nil {
		e.buf = append(e.buf, 0)
		return
	}
	if h, ok := e.refs.handle(uintptr(q), pl, e.next); ok {
		e.buf = binary.AppendUvarint(e.buf, uint64(h)+2)
		return
	}
	e.next++
	e.buf = append(e.buf, 1)
	e.queue = append(e.queue, queued{q, pl})
}

// mapValue appends a map: its length and its entries in iteration order.
func (e *encoder) mapValue(p unsafe.Pointer, pl *codecPlan) error {
	m := reflect.NewAt(pl.t, p).Elem()
	if m.IsNil() {
		e.buf = append(e.buf, 0)
		return nil
	}
	e.buf = binary.AppendUvarint(e.buf, uint64(m.Len())+1)
	k := reflect.New(pl.key.t).Elem()
	v := reflect.New(pl.elem.t).Elem()
	it := m.MapRange()
	for it.Next() {
		k.SetIterKey(it)
		v.SetIterValue(it)
		if err := e.encode(k.Addr().UnsafePointer(), pl.key); err != nil {
			return err
		}
		if err := e.encode(v.Addr().UnsafePointer(), pl.elem); err != nil {
			return err
		}
	}
	return nil
}

// fixed appends a number in little-endian order on a big-endian host.
func (e *encoder) fixed(p unsafe.Pointer, pl *codecPlan) {
	for i := uintptr(0); i < pl.size; i += pl.esz {
		q := unsafe.Add(p, i)
		switch pl.esz {
		case 2:
			e.buf = binary.LittleEndian.AppendUint16(e.buf, *(*uint16)(q))
		case 4:
			e.buf = binary.LittleEndian.AppendUint32(e.buf, *(*uint32)(q))
		default:
			e.buf = binary.LittleEndian.AppendUint64(e.buf, *(*uint64)(q))
		}
	}
}
