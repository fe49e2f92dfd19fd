package serialization

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// maxRetainLens is the largest row-length scratch a Reader keeps.
const maxRetainLens = 1 << 16

// objReader reads the body of a fast-path object into a destination of one
// pointer type.
type objReader struct {
	tag  byte
	read func(r *Reader, ptr any) error
}

// objReaders maps destination pointer types to their fast path. It is
// filled once at init and only read afterwards.
var objReaders = map[reflect.Type]objReader{}

func init() {
	objReaders[reflect.TypeFor[*string]()] = objReader{tagString, func(r *Reader, p any) error {
		s, err := r.ReadString()
		*p.(*string) = s
		return err
	}}
	regElem[bool](eBool)
	regElem[uint8](eUint8)
	regElem[int8](eInt8)
	regElem[int16](eInt16)
	regElem[uint16](eUint16)
	regElem[int32](eInt32)
	regElem[uint32](eUint32)
	regElem[int64](eInt64)
	regElem[uint64](eUint64)
	regElem[int](eInt)
	regElem[uint](eUint)
	regElem[float32](eFloat32)
	regElem[float64](eFloat64)
}

// regElem registers the scalar, slice and 2-D slice fast paths of T.
func regElem[T Primitive](c elemCode) {
	objReaders[reflect.TypeFor[*T]()] = objReader{tagScalar + byte(c), func(r *Reader, p any) error {
		return readSlice(r, unsafe.Slice(p.(*T), 1), c)
	}}
	objReaders[reflect.TypeFor[*[]T]()] = objReader{tagSlice + byte(c), func(r *Reader, p any) error {
		return readSliceObject(r, p.(*[]T), c)
	}}
	objReaders[reflect.TypeFor[*[][]T]()] = objReader{tagSlice2D + byte(c), func(r *Reader, p any) error {
		return read2DObject(r, p.(*[][]T), c)
	}}
}

// ReadObject reads a value written by WriteObject into ptr, which must be a
// non-nil pointer. Fast-path objects (nil, strings, primitives, primitive
// slices and 2-D slices) need a pointer to exactly their type, or to an
// interface they satisfy such as *any; a slice destination long enough is
// reused (never written beyond its length), otherwise a new slice is
// allocated as the data arrives, bounded by the rest of the message. An
// object sent by the codec needs a pointer to a type of the same shape (the
// same field names and kinds; a pointer to it or to a pointer to it), or to
// an interface when its type was given to Register; it is decoded into new
// memory and stored only when complete. Other
// objects are decoded with msgpack into whatever ptr points to, after their
// bytes have been checked for well-formedness and nesting depth, and for
// what decoding them into ptr's type could allocate: an object whose
// announced arrays and maps could make the decoder allocate more than
// WithReaderMaxObjectMemory gets an error wrapping ErrTooLarge and is
// skipped, without being decoded. A
// destination that does not fit gets an error wrapping ErrTypeMismatch that
// names both types, and the object is skipped. Only KindObject allows it.
func (r *Reader) ReadObject(ptr any) error {
	if r.kind != KindObject {
		return r.kind.needObject("ReadObject")
	}
	pv := reflect.ValueOf(ptr)
	if pv.Kind() != reflect.Pointer || pv.IsNil() {
		return fmt.Errorf("%w: ReadObject needs a non-nil pointer, got %T", ErrUnsupported, ptr)
	}
	b, err := r.take(secI8, 1, "an object tag")
	if err != nil {
		return err
	}
	tag := b[0]
	switch tag {
	case tagNil:
		pv.Elem().SetZero()
		return nil
	case tagMsgpack:
		// Like encoding/json: an interface holding a non-pointer value is
		// replaced, one holding a pointer is decoded through it.
		if e := pv.Elem(); e.Kind() == reflect.Interface && !e.IsNil() && e.Elem().Kind() != reflect.Pointer {
			e.SetZero()
		}
		return r.readMsgpack(ptr)
	case tagCodec:
		return r.readCodec(pv)
	}
	t := tagType(tag)
	if t == nil {
		return corruptf("unknown object tag %d", tag)
	}
	if h, ok := objReaders[pv.Type()]; ok && h.tag == tag {
		return h.read(r, ptr)
	}
	if et := pv.Type().Elem(); et.Kind() == reflect.Interface && t.Implements(et) {
		nv := reflect.New(t)
		if err := objReaders[nv.Type()].read(r, nv.Interface()); err != nil {
			return err
		}
		pv.Elem().Set(nv.Elem())
		return nil
	}
	if err := r.skipObject(tag); err != nil {
		return err
	}
	return mismatchf("the object is a %s, the destination is %T (the object was skipped)", tagName(tag), ptr)
}

// readSliceObject reads a tagged 1-D slice.
func readSliceObject[T Primitive](r *Reader, p *[]T, c elemCode) error {
	n, err := r.readLen("object slice length", true)
	if err != nil {
		return err
	}
	switch {
	case n == -1:
		*p = nil
		return nil
	case n == 0:
		*p = []T{}
		return nil
	}
	s, err := readGrow(r, *p, n, c, arrWhat[c])
	if err != nil {
		return err
	}
	*p = s
	return nil
}

// read2DObject reads a tagged 2-D slice into newly allocated rows.
func read2DObject[T Primitive](r *Reader, p *[][]T, c elemCode) error {
	count, err := r.readLen("object row count", true)
	if err != nil {
		return err
	}
	if count == -1 {
		*p = nil
		return nil
	}
	esz := int64(secSize[elems[c].sec])
	lens := r.lens[:0]
	var sum int64
	for range count {
		l, err := r.readLen("object row length", true)
		if err != nil {
			return err
		}
		if l > r.budget()/esz-sum {
			return r.tooMuch(arr2What[c], sum+l)
		}
		sum += max(l, 0)
		lens = append(lens, l) // grows with lengths actually received
	}
	rows := make([][]T, len(lens))
	for i, l := range lens {
		switch l {
		case -1:
			continue // a nil row
		case 0:
			rows[i] = []T{}
			continue
		}
		if rows[i], err = readGrow[T](r, nil, l, c, arr2What[c]); err != nil {
			break
		}
	}
	r.lens = lens[:0]
	if cap(r.lens) > maxRetainLens {
		r.lens = nil
	}
	if err != nil {
		return err
	}
	*p = rows
	return nil
}

// skipObject skips the body of a fast-path object whose tag was read.
func (r *Reader) skipObject(tag byte) error {
	if tag == tagString {
		b, err := r.take(secI32, 4, "a string length")
		if err != nil {
			return err
		}
		n := int32(r.get32(b))
		if n < 0 {
			return corruptf("negative string length %d", n)
		}
		return r.skipIn(secI8, int64(n), "string bytes")
	}
	var c elemCode
	switch {
	case tag >= tagSlice2D:
		c = elemCode(tag - tagSlice2D)
	case tag >= tagSlice:
		c = elemCode(tag - tagSlice)
	default:
		c = elemCode(tag - tagScalar)
	}
	sec := elems[c].sec
	esz := int64(secSize[sec])
	var n int64
	switch {
	case tag >= tagSlice2D:
		rows, err := r.readLen("object row count", true)
		if err != nil {
			return err
		}
		for range rows {
			l, err := r.readLen("object row length", true)
			if err != nil {
				return err
			}
			if l > r.budget()/esz-n {
				return r.tooMuch(arr2What[c], n+l)
			}
			n += max(l, 0)
		}
	case tag >= tagSlice:
		l, err := r.readLen("object slice length", true)
		if err != nil {
			return err
		}
		if l > r.budget()/esz {
			return r.tooMuch(arrWhat[c], l)
		}
		n = max(l, 0)
	default:
		n = 1
	}
	return r.skipIn(sec, n*esz, "a skipped object")
}

// readMsgpack reads the length-prefixed msgpack bytes of an object, checks
// them (well-formedness, depth, and what decoding them into ptr could
// allocate), and decodes them into ptr. An object that fails the check has
// been consumed: the message goes on after it.
func (r *Reader) readMsgpack(ptr any) error {
	b, err := r.readBlob(msgpackBlob)
	defer r.releaseBlob()
	if err != nil {
		return err
	}
	if _, err := checkMsgpack(b, r.cfg.maxObjectDepth, r.costFor(ptr), r.cfg.maxObjectMemory); err != nil {
		return err
	}
	if r.dec == nil {
		r.dec = msgpack.NewDecoder(nil)
	}
	r.objR.Reset(b)
	r.dec.Reset(&r.objR)
	if err := decodeSafely(r.dec, ptr); err != nil {
		return fmt.Errorf("%w: decoding a msgpack object into %T: %w", ErrTypeMismatch, ptr, err)
	}
	return nil
}

// readBlob reads the length and the bytes of an encoded object (msgpack or
// codec) into the Reader's object scratch.
func (r *Reader) readBlob(b blobKind) ([]byte, error) {
	n, err := r.readLen(b.length, false)
	if err != nil {
		return nil, err
	}
	out, err := readGrow(r, r.obj[:cap(r.obj)], n, eUint8, b.bytes)
	if err != nil {
		return nil, err
	}
	r.obj = out
	return out, nil
}

// blobKind names an object blob's parts for errors; its strings are made once, not
// per object read.
type blobKind struct{ length, bytes string }

var (
	codecBlob   = blobKind{"codec object length", "codec object bytes"}
	msgpackBlob = blobKind{"msgpack object length", "msgpack object bytes"}
)

// releaseBlob drops the object scratch after a large object, and the msgpack
// decoder with it (its read buffer may have grown as large).
func (r *Reader) releaseBlob() {
	if cap(r.obj) > maxRetainBuf {
		r.obj = nil
		r.dec = nil
	}
}

// costFor returns the allocation costs of decoding into ptr, remembering
// the last destination type: a receiver usually reads one type again and
// again. A pointer to an interface is costed by its content each time.
func (r *Reader) costFor(ptr any) *objCost {
	t := reflect.TypeOf(ptr)
	if t == r.costType {
		return r.cost
	}
	c := costFor(ptr)
	if t.Elem().Kind() != reflect.Interface {
		r.costType, r.cost = t, c
	}
	return c
}

// decodeSafely runs the msgpack decoder, turning a panic inside it (or in a
// destination's custom decoder) into an error.
func decodeSafely(dec *msgpack.Decoder, ptr any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("msgpack decoder panicked: %v", p)
		}
	}()
	return dec.Decode(ptr)
}
