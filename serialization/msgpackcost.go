package serialization

import (
	"encoding"
	"math"
	"reflect"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// objCost bounds what the msgpack decoder may allocate for each unit of its
// input when it decodes into one destination type. checkMsgpack charges
// these costs for what the msgpack bytes announce, before the decoder runs:
// msgpack/v5 pre-allocates the announced length of every slice and map (its
// own allocation limit is disabled by a bug), so a few wire bytes per
// element can make it allocate thousands of bytes per element.
//
// The figures are upper bounds for msgpack/v5 v5.4.1 on the Go runtime's
// allocator, measured and then rounded up (see msgpack_alloc_test.go): a
// typed slice is allocated twice (reflect.MakeSlice, then AppendSlice copies
// it), a typed map entry costs its share of the table plus the key and value
// the decoder allocates before inserting them, and every allocation is
// rounded up to a size class. They do not cover custom decoders
// (msgpack.CustomDecoder, msgpack.Unmarshaler), which may allocate anything,
// nor values a caller stored in interfaces of the destination beforehand
// (except at the top level, see costFor): an interface is assumed to receive
// msgpack's generic types.
type objCost struct {
	item     int64 // per announced array item: the largest slice element
	entry    int64 // per announced map entry: the costliest map entry
	array    int64 // per array: the slice headers reflect allocates
	mapBase  int64 // per map: its header
	mapGroup int64 // per non-empty map: its first group of slots
	// ptr is, per class of a non-nil value, what the pointees of the
	// pointers it may be decoded through cost. A value of another class
	// does not fit such a pointer's target, which stops the decoder: that
	// can happen once per object, charged in once.
	ptr    [mpClasses]int64
	once   int64 // per object: see ptr, and reflect.Zero of a large destination
	ptrNil int64 // per nil value: a nil pointer replacing a set one
	// zero is, per nil value or empty array, reflect.Zero of a struct over
	// 1 KiB that is a struct field: a map may repeat a key any number of
	// times. Slice elements, map keys and values and pointees of that kind
	// are charged with their items, entries or pointers instead.
	zero  int64
	boxed bool // an interface is reachable: values become generic types
	// strings is whether a string or binary payload may be copied: only
	// into a string, a byte slice, an interface or a custom decoder (map
	// keys naming struct fields are not copied).
	strings bool
	// head is the sum of the above that every value of a class costs.
	head [mpClasses]int64
	name string // the destination type, for error messages
}

// Costs of msgpack's generic types, used where an interface is reachable:
// []any elements are 16 bytes; a map[string]any entry is a 16-byte key and a
// 16-byte value in a hash table with room to grow.
const (
	genericItem  = 16 + 16/4 // []any element, with size-class rounding
	genericKV    = 16 + 16   // map[string]any slot
	zeroValLimit = 1024      // reflect.Zero allocates only above this size
	mapSlotLimit = 128       // larger keys and values are stored indirectly
	sliceHdrCost = 96        // reflect's escaped slice headers per array
	mapHdrCost   = 64        // a map's header
)

// costCache maps destination types to their *objCost.
var costCache sync.Map

// costFor returns the allocation costs of decoding msgpack into ptr, a
// non-nil pointer. A non-nil interface at the top of the destination
// (ReadObject keeps only pointers there) is decoded through its dynamic
// value, so that value's type is costed instead.
func costFor(ptr any) *objCost {
	pv := reflect.ValueOf(ptr)
	t := pv.Type().Elem()
	if e := pv.Elem(); e.Kind() == reflect.Interface && !e.IsNil() {
		t = e.Elem().Type()
	}
	return costOf(t)
}

// costOf returns the cached allocation costs of decoding into a value of
// type t; the first call per type walks it with reflect.
func costOf(t reflect.Type) *objCost {
	if c, ok := costCache.Load(t); ok {
		return c.(*objCost)
	}
	c := &objCost{name: t.String()}
	w := costWalker{c: c, seen: map[reflect.Type]bool{}}
	w.walk(t)
	c.once = satAdd(c.once, zeroCost(t))
	if c.boxed {
		c.item = max(c.item, genericItem)
		c.entry = max(c.entry, mapEntryCost(genericKV, 0))
		c.mapBase = mapHdrCost
		c.mapGroup = max(c.mapGroup, mapGroupCost(genericKV))
	}
	for cls := range mpClasses {
		h := c.ptr[cls]
		switch cls {
		case mpNil:
			h = satAdd(c.ptrNil, c.zero)
		case mpArray:
			h = satAdd(h, c.array)
		case mpMap:
			h = satAdd(h, c.mapBase)
		}
		if c.boxed {
			h = satAdd(h, genericBox[cls])
		}
		c.head[cls] = h
	}
	actual, _ := costCache.LoadOrStore(t, c)
	return actual.(*objCost)
}

var (
	customDecoderType     = reflect.TypeFor[msgpack.CustomDecoder]()
	unmarshalerType       = reflect.TypeFor[msgpack.Unmarshaler]()
	binaryUnmarshalerType = reflect.TypeFor[encoding.BinaryUnmarshaler]()
	textUnmarshalerType   = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// custom reports whether msgpack decodes t with the type's own code, and
// whether that code is a msgpack decoder (which typically builds its value
// from generic ones).
func custom(t reflect.Type) (own, msgpackOwn bool) {
	for _, u := range []reflect.Type{t, reflect.PointerTo(t)} {
		if u.Implements(customDecoderType) || u.Implements(unmarshalerType) {
			return true, true
		}
		if u.Implements(binaryUnmarshalerType) || u.Implements(textUnmarshalerType) {
			own = true
		}
	}
	return own, false
}

// Masks of value classes.
const (
	allClasses   = 1<<mpClasses - 1
	numberMask   = 1<<mpSmall | 1<<mpNumber
	bytesMask    = 1<<mpStr | 1<<mpBin
	extMask      = 1 << mpExt // any type may be registered as an extension
	arrayMapMask = 1<<mpArray | 1<<mpMap
)

// accepts returns the classes of non-nil msgpack values that decode into a
// value of type t without an error.
func accepts(t reflect.Type, depth int) uint {
	if own, _ := custom(t); own || depth > 16 {
		return allClasses
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return numberMask | extMask
	case reflect.String:
		return bytesMask | extMask
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return 1<<mpArray | bytesMask | extMask
		}
		return 1<<mpArray | extMask
	case reflect.Map:
		return 1<<mpMap | extMask
	case reflect.Struct:
		return arrayMapMask | extMask
	case reflect.Pointer:
		return accepts(t.Elem(), depth+1)
	}
	return allClasses // interfaces, and whatever msgpack makes of other kinds
}

// costWalker visits every type reachable from a destination type once.
type costWalker struct {
	c    *objCost
	seen map[reflect.Type]bool
}

func (w *costWalker) walk(t reflect.Type) {
	if w.seen[t] {
		return
	}
	w.seen[t] = true
	c := w.c
	own, msgpackOwn := custom(t)
	if msgpackOwn {
		c.boxed = true
	}
	if own {
		c.zero = max(c.zero, zeroCost(t))
		c.strings = true
	}
	switch t.Kind() {
	case reflect.String:
		c.strings = true
	case reflect.Pointer:
		// A value that fits the target allocates it; one value may go
		// through several pointers (a pointer to a pointer, embedded
		// struct pointers), so the costs add up.
		// A large struct target is then zeroed by an empty array (or
		// by a nil, if it has a custom decoder).
		e := t.Elem()
		size := satAdd(roundAlloc(int64(e.Size())), zeroCost(e))
		mask := accepts(e, 0)
		for cls := range mpClasses {
			if mask&(1<<cls) != 0 {
				c.ptr[cls] = satAdd(c.ptr[cls], size)
			}
		}
		c.once = satAdd(c.once, size)
		c.ptrNil = roundAlloc(8)
		if own, _ := custom(e); own {
			c.zero = max(c.zero, zeroCost(e))
		}
		w.walk(e)
	case reflect.Slice:
		// reflect.MakeSlice, then reflect.AppendSlice into a nil slice
		// copies it: twice the elements, each allocation rounded up to
		// its size class (at most a quarter more); a nil or an empty
		// array may then zero a large element.
		if t.Elem().Kind() == reflect.Uint8 {
			c.strings = true
		}
		e := int64(t.Elem().Size())
		c.item = max(c.item, satAdd(satMul(2, satAdd(e, e/4)), zeroCost(t.Elem())))
		c.array = max(c.array, sliceHdrCost)
		w.walk(t.Elem())
	case reflect.Array:
		w.walk(t.Elem()) // decoded in place
	case reflect.Map:
		k, v := int64(t.Key().Size()), int64(t.Elem().Size())
		slot := satAdd(slotSize(k), slotSize(v))
		// The decoder allocates every key and value with reflect.New
		// before inserting them; oversized ones are allocated again by
		// the map.
		extra := satAdd(satAdd(roundAlloc(k), roundAlloc(v)), satAdd(zeroCost(t.Key()), zeroCost(t.Elem())))
		if k > mapSlotLimit {
			extra = satAdd(extra, roundAlloc(k))
		}
		if v > mapSlotLimit {
			extra = satAdd(extra, roundAlloc(v))
		}
		c.entry = max(c.entry, mapEntryCost(slot, extra))
		c.mapBase = mapHdrCost
		c.mapGroup = max(c.mapGroup, mapGroupCost(slot))
		w.walk(t.Key())
		w.walk(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() || f.Anonymous {
				c.zero = max(c.zero, zeroCost(f.Type))
				w.walk(f.Type)
			}
		}
	case reflect.Interface:
		c.boxed = true
		c.strings = true
	}
}

// zeroCost is what reflect.Zero allocates when a nil (or, for a struct, an
// empty array) is decoded into a value of type t, or an array of them: a
// struct over 1 KiB, or a type with its own decoder (which zeroes the value
// behind a pointer).
func zeroCost(t reflect.Type) int64 {
	if own, _ := custom(t); own && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	u := t
	for u.Kind() == reflect.Array {
		u = u.Elem()
	}
	if own, _ := custom(u); (u.Kind() == reflect.Struct || own) && t.Size() > zeroValLimit {
		return roundAlloc(int64(t.Size()))
	}
	return 0
}

// slotSize is the room a key or value of n bytes takes in a map's slot:
// larger ones are stored behind a pointer.
func slotSize(n int64) int64 {
	if n > mapSlotLimit {
		return 8
	}
	return n
}

// mapEntryCost is the cost of one entry of a map with slots of the given
// size: a hash table with 8/7 slots per entry, rounded up to a power of two
// (so up to 16/7), plus a control byte per slot; extra is what the decoder
// allocates per entry besides the table.
func mapEntryCost(slot, extra int64) int64 {
	return satAdd(satMul(3, satAdd(slot, 1)), extra)
}

// mapGroupCost is the cost of the first group of 8 slots and their control
// word, which a map allocates even for one entry.
func mapGroupCost(slot int64) int64 {
	return roundAlloc(satAdd(8, satMul(8, slot)))
}

// roundAlloc bounds the size the allocator actually reserves for an n-byte
// object: size classes waste at most an eighth above 128 bytes (and at
// most 16 bytes below), large objects at most a page.
func roundAlloc(n int64) int64 {
	if n > 32<<10 {
		return satAdd(n, 8<<10)
	}
	return n + n/8 + 16
}

// satAdd and satMul are addition and multiplication of non-negative
// int64s that saturate instead of overflowing.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}
