package serialization

import "reflect"

// elemCode names a primitive element type; the object tags are built from it.
type elemCode uint8

const (
	eBool elemCode = iota
	eUint8
	eInt8
	eInt16
	eUint16
	eInt32
	eUint32
	eInt64
	eUint64
	eInt
	eUint
	eFloat32
	eFloat64
	numElems
)

type elemDesc struct {
	name string
	sec  int
	typ  reflect.Type
}

var elems = [numElems]elemDesc{
	eBool:    {"bool", secI8, reflect.TypeFor[bool]()},
	eUint8:   {"uint8", secI8, reflect.TypeFor[uint8]()},
	eInt8:    {"int8", secI8, reflect.TypeFor[int8]()},
	eInt16:   {"int16", secI16, reflect.TypeFor[int16]()},
	eUint16:  {"uint16", secI16, reflect.TypeFor[uint16]()},
	eInt32:   {"int32", secI32, reflect.TypeFor[int32]()},
	eUint32:  {"uint32", secI32, reflect.TypeFor[uint32]()},
	eInt64:   {"int64", secI64, reflect.TypeFor[int64]()},
	eUint64:  {"uint64", secI64, reflect.TypeFor[uint64]()},
	eInt:     {"int", secI64, reflect.TypeFor[int]()},
	eUint:    {"uint", secI64, reflect.TypeFor[uint]()},
	eFloat32: {"float32", secF32, reflect.TypeFor[float32]()},
	eFloat64: {"float64", secF64, reflect.TypeFor[float64]()},
}

// Object tags: the first byte of every object, in the 8-bit section.
const (
	tagNil     = 0
	tagMsgpack = 1
	tagString  = 2
	tagCodec   = 3  // int64 length, the object codec's bytes (codec.go)
	tagScalar  = 16 // + elemCode: one primitive value
	tagSlice   = 32 // + elemCode: int64 length (-1 for nil), elements
	tagSlice2D = 48 // + elemCode: int64 rows (-1 for nil), int64 lengths, rows
)

// tagType returns the Go type an object tag decodes to, or nil for tags
// without a fixed type (nil, msgpack) and unknown tags.
func tagType(tag byte) reflect.Type {
	switch {
	case tag == tagString:
		return reflect.TypeFor[string]()
	case tag >= tagScalar && tag < tagScalar+byte(numElems):
		return elems[tag-tagScalar].typ
	case tag >= tagSlice && tag < tagSlice+byte(numElems):
		return reflect.SliceOf(elems[tag-tagSlice].typ)
	case tag >= tagSlice2D && tag < tagSlice2D+byte(numElems):
		return reflect.SliceOf(reflect.SliceOf(elems[tag-tagSlice2D].typ))
	}
	return nil
}

// tagName describes an object tag for error messages.
func tagName(tag byte) string {
	switch tag {
	case tagNil:
		return "nil"
	case tagMsgpack:
		return "a msgpack-encoded value"
	case tagCodec:
		return "a codec-encoded value"
	}
	if t := tagType(tag); t != nil {
		return t.String()
	}
	return "unknown"
}
