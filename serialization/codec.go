package serialization

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"sync"
)

// The object codec: how WriteObject sends a struct without msgpack.
//
// A value whose type is, or reaches, a struct is encoded by a plan compiled
// once per Go type (codec_plan.go) when every type it reaches is covered:
// booleans, integers, floats, complex numbers, strings, structs (their
// exported fields and embedded structs), arrays, slices, maps and pointers.
// A type that reaches an interface, channel, function or unsafe pointer, a
// field with a msgpack struct tag, or a type with its own msgpack, binary or
// text marshalling is left to msgpack, which encodes it as before.
//
// The object travels as tagCodec, an int64 length and that many bytes:
//
//	8 bytes   the type's fingerprint: FNV-64a of its structural description
//	          (kinds, sizes, field names, recursion), little endian
//	1 byte    flags: 1 = the value was given by pointer (it is object 0)
//	uvarint   length of the type's name (reflect's String, or empty when
//	          longer than maxCodecName), then the name
//	...       the value
//
// Values are little endian whatever the stream's byte order: numbers in
// their size, bool as 0 or 1, a string as a uvarint length and its bytes, a
// struct as its fields in order, an array as its elements, a slice or map
// as a uvarint 0 for nil or its length+1 and its elements (a map's in
// iteration order, key then value), and a pointer as a uvarint: 0 nil, 1 a
// new object, k+2 the object with handle k. New objects get handles in the
// order they appear and their values follow the value that first pointed to
// them, breadth first, so shared references and cycles survive the trip (as
// in Java Ibis's object serialization) and a long linked list does not
// recurse. Slices and maps are values, as in encoding/gob: two slices that
// share an array arrive as two arrays.
//
// The reader checks the fingerprint against the destination's type, so a
// program whose declaration differs gets ErrTypeMismatch, never a garbled
// value; a destination *any needs the type registered with Register.

// maxCodecName bounds the type name sent with a codec object.
const maxCodecName = 64

// codecFlagPointer marks a value that was given by pointer.
const codecFlagPointer = 1

// writeCodec encodes v with its compiled plan. It reports false when v's
// type is left to msgpack.
func (w *Writer) writeCodec(v any) (bool, error) {
	rv := reflect.ValueOf(v)
	t := rv.Type()
	byPointer := t.Kind() == reflect.Pointer
	if byPointer {
		t = t.Elem()
	}
	pl, err := planFor(t)
	if err != nil || !pl.viaCodec {
		return false, nil
	}
	if byPointer && rv.IsNil() {
		return true, w.writeTagOnly(tagNil)
	}
	if err := w.ready(); err != nil {
		return true, err
	}
	var root reflect.Value
	if byPointer {
		root = rv
	} else {
		root = reflect.New(t)
		root.Elem().Set(rv)
	}
	e := &w.codec
	e.reset()
	e.buf = binary.LittleEndian.AppendUint64(e.buf, pl.fp)
	flags := byte(0)
	if byPointer {
		flags = codecFlagPointer
	}
	e.buf = append(e.buf, flags)
	e.buf = binary.AppendUvarint(e.buf, uint64(len(pl.name)))
	e.buf = append(e.buf, pl.name...)
	err = e.encodeRoot(root.UnsafePointer(), pl, byPointer)
	clear(e.queue) // keep no pointer into the caller's objects until the next write
	if err != nil {
		return true, err
	}
	err = w.writeBlob(tagCodec, e.buf, t.String())
	if cap(e.buf) > maxRetainedObjBuf {
		e.buf = nil
	}
	return true, err
}

// codecName is the name a codec object carries for error messages and for
// Register: reflect's String of its type, unless that is long (an unnamed
// struct type spells out its fields).
func codecName(t reflect.Type) string {
	if s := t.String(); len(s) <= maxCodecName {
		return s
	}
	return ""
}

// codecHeader is the head of a codec object's bytes.
type codecHeader struct {
	fp        uint64
	byPointer bool
	name      []byte // a view of the object's bytes: made a string only when needed
	body      []byte
}

// parseCodecHeader splits a codec object's bytes into its header and value.
func parseCodecHeader(b []byte) (codecHeader, error) {
	var h codecHeader
	if len(b) < 10 {
		return h, corruptf("object codec: %d bytes, too short for a header", len(b))
	}
	h.fp = binary.LittleEndian.Uint64(b)
	if b[8]&^codecFlagPointer != 0 {
		return h, corruptf("object codec: unknown flags %#x", b[8])
	}
	h.byPointer = b[8]&codecFlagPointer != 0
	n, k := binary.Uvarint(b[9:])
	if k <= 0 || n > maxCodecName || n > uint64(len(b)-9-k) {
		return h, corruptf("object codec: bad type name length")
	}
	h.name = b[9+k : 9+k+int(n)]
	h.body = b[9+k+int(n):]
	return h, nil
}

// readCodec reads a codec object into ptr, a non-nil pointer. The value is
// decoded into new memory and stored only when it decoded completely.
func (r *Reader) readCodec(pv reflect.Value) error {
	b, err := r.readBlob(codecBlob)
	defer r.releaseBlob()
	if err != nil {
		return err
	}
	h, err := parseCodecHeader(b)
	if err != nil {
		return err
	}
	dst := pv.Elem()
	dt := dst.Type()
	if dt.Kind() == reflect.Interface {
		rt := registeredType(string(h.name), h.fp)
		if rt == nil {
			what := h.what()
			return mismatchf("the object is a %s sent by the object codec, the destination is %s: register the type with serialization.Register in the receiving program, or read into a *%s (the object was skipped)", what, pv.Type(), what)
		}
		pl, err := planFor(rt)
		if err != nil {
			return err
		}
		nv, err := r.decodeCodec(rt, pl, h)
		if err != nil {
			return err
		}
		val := nv.Elem()
		if h.byPointer {
			val = nv
		}
		if !val.Type().Implements(dt) {
			return mismatchf("the object is a %s, which does not implement %s (the object was skipped)", val.Type(), dt)
		}
		dst.Set(val)
		return nil
	}
	if pl, err := planFor(dt); err == nil && pl.fp == h.fp {
		nv, err := r.decodeCodec(dt, pl, h)
		if err != nil {
			return err
		}
		dst.Set(nv.Elem())
		return nil
	}
	if dt.Kind() == reflect.Pointer {
		if pl, err := planFor(dt.Elem()); err == nil && pl.fp == h.fp {
			nv, err := r.decodeCodec(dt.Elem(), pl, h)
			if err != nil {
				return err
			}
			dst.Set(nv)
			return nil
		}
	}
	return mismatchf("the object is a %s sent by the object codec, the destination is %s, whose fields or types differ (the object was skipped)", h.what(), pv.Type())
}

// what names the object's type for an error message.
func (h codecHeader) what() string {
	if len(h.name) == 0 {
		return "struct value"
	}
	return string(h.name)
}

// decodeCodec decodes the value of h into a new value of type t, whose plan pl
// has h's fingerprint, and returns a pointer to it.
func (r *Reader) decodeCodec(t reflect.Type, pl *codecPlan, h codecHeader) (nv reflect.Value, err error) {
	d := &r.codec
	d.reset(h.body, r.cfg.maxObjectMemory, r.cfg.maxObjectDepth)
	defer func() {
		if p := recover(); p != nil {
			err = corruptf("object codec: decoding a %s panicked: %v", t, p)
		}
		d.reset(nil, 0, 0) // drop references to the value and the bytes
	}()
	if err := d.charge(int64(t.Size()), "the value"); err != nil {
		return nv, err
	}
	nv = reflect.New(t)
	if err := d.decodeRoot(nv.UnsafePointer(), pl, h.byPointer); err != nil {
		return reflect.Value{}, fmt.Errorf("reading a %s: %w", t, err)
	}
	return nv, nil
}

// registry maps the name and fingerprint of a type to the type, for codec
// objects read into an interface.
var registry sync.Map

// regKey is a registry entry's key.
type regKey struct {
	name string
	fp   uint64
}

// Register records the type of value, so that a codec-encoded object of
// that type can be read into an interface destination such as *any. As with
// encoding/gob, the receiver must know the concrete types it may get; a
// destination of the value's own type (or a pointer to it) needs no
// registration. A pointer registers the type it points to; the object is
// then stored in the interface by pointer if it was sent by pointer, else
// by value. Registering the same type again does nothing; another type of
// the same name and shape is an error, as is a type the codec does not
// cover (msgpack-encoded values decode into *any without registration).
func Register(value any) error {
	t := reflect.TypeOf(value)
	if t == nil {
		return fmt.Errorf("%w: Register(nil)", ErrUnsupported)
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pl, err := planFor(t)
	if err != nil {
		return fmt.Errorf("%w: Register(%s): %w", ErrUnsupported, t, err)
	}
	if !pl.viaCodec {
		return fmt.Errorf("%w: Register(%s): %s travels as msgpack, which reads into *any without registration", ErrUnsupported, t, t)
	}
	k := regKey{pl.name, pl.fp}
	if old, loaded := registry.LoadOrStore(k, t); loaded && old.(reflect.Type) != t {
		return fmt.Errorf("%w: Register(%s): %s is registered under the same name and shape", ErrUnsupported, t, old)
	}
	return nil
}

// registeredType returns the type registered under name and fp, or nil.
func registeredType(name string, fp uint64) reflect.Type {
	if v, ok := registry.Load(regKey{name, fp}); ok {
		return v.(reflect.Type)
	}
	return nil
}
