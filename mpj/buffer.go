package mpj

import (
	"fmt"
	"reflect"

	"github.com/ibisgo/ibis/ipl"
)

// pbuf is a point-to-point buffer: a slice of a primitive type, a 2-D slice of one, or a
// slice of objects. Point-to-point messages take all three; collectives take 1-D
// primitive slices only (bufInfo).
type pbuf struct {
	v     any      // the program's buffer
	dtype Datatype // element type; Object for a slice of objects
	n     int      // room, in elements (all rows together for a 2-D slice)
	rows  []any    // a 2-D slice's rows, each a 1-D slice; nil otherwise
	objs  reflect.Value
	elem  string // an object slice's element type, as reflect names it
	enc   []byte // the objects' encoding, once encode made it
}

// encode encodes an object buffer's first n objects for write and detach, before a message
// is begun, so that a value msgpack cannot encode fails the send, not the message.
func (b *pbuf) encode(n int) error {
	if b.dtype != Object || n == 0 {
		return nil
	}
	var err error
	b.enc, err = encodeObjects(b.objs, n)
	return err
}

// maxElemName bounds the element type name an object message carries, so that a corrupt
// header cannot make the receiver allocate more.
const maxElemName = 256

// p2pBuf describes a point-to-point buffer, or says why buf is not one.
func p2pBuf(buf any) (pbuf, error) {
	if dt, n, err := bufInfo(buf); err == nil {
		return pbuf{v: buf, dtype: dt, n: n}, nil
	}
	rv := reflect.ValueOf(buf)
	if rv.Kind() != reflect.Slice {
		return pbuf{}, fmt.Errorf("%w: mpj: a buffer must be a slice ([]float64, [][]int32, []MyStruct, ...), not %T",
			ipl.ErrUnsupported, buf)
	}
	if et := rv.Type().Elem(); et.Kind() == reflect.Slice {
		if dt, _, err := bufInfo(reflect.Zero(et).Interface()); err == nil {
			b := pbuf{v: buf, dtype: dt, rows: make([]any, rv.Len())}
			for i := range b.rows {
				b.rows[i] = rv.Index(i).Interface()
				b.n += rv.Index(i).Len()
			}
			return b, nil
		}
	}
	name := rv.Type().Elem().String()
	if len(name) > maxElemName {
		return pbuf{}, fmt.Errorf("%w: mpj: the element type name %.40s... is longer than %d bytes", ipl.ErrUnsupported, name, maxElemName)
	}
	return pbuf{v: buf, dtype: Object, n: rv.Len(), objs: rv, elem: name}, nil
}

// kind names the buffer's type for errors: "[]float64", "[][]int32", "[]main.Body".
func (b *pbuf) kind() string {
	switch {
	case b.dtype == Object:
		return "[]" + b.elem
	case b.rows != nil:
		return "[][]" + b.dtype.String()
	}
	return "[]" + b.dtype.String()
}

// write puts the first n elements of the buffer on a message: the rows of a 2-D slice one
// after the other (so that the receiver may hold them in any shape), objects as the
// encoding encode made (object.go).
func (b *pbuf) write(m ipl.WriteMessage, n int) error {
	switch {
	case n == 0:
		return nil
	case b.dtype == Object:
		return writeObjectBytes(m, b.enc)
	case b.rows != nil:
		return b.eachRow(n, m.WriteArray)
	}
	return m.WriteArray(sliceBuf(b.v, 0, n))
}

// read fills the first n elements of a primitive or 2-D buffer from a message written by
// write, whatever the sender's shape. (Objects are read as bytes, readObjectBytes, and
// decoded by fill, so that a value that does not decode fails its receive, not the
// connection.)
func (b *pbuf) read(m ipl.ReadMessage, n int) error {
	switch {
	case n == 0:
		return nil
	case b.rows != nil:
		return b.eachRow(n, m.ReadArray)
	}
	return m.ReadArray(sliceBuf(b.v, 0, n))
}

// detach returns a copy of the buffer's first n elements that no longer shares memory with
// it, as a queued message holds it: a 1-D slice for primitive and 2-D buffers, the encoding
// (made by encode) for objects.
func (b *pbuf) detach(n int) (any, error) {
	switch {
	case b.dtype == Object:
		return b.enc, nil
	case b.rows != nil:
		flat, off := makeBuf(b.dtype, n), 0
		return flat, b.eachRow(n, func(seg any) error {
			off += copyBuf(sliceBuf(flat, off, n), seg)
			return nil
		})
	}
	return cloneBuf(sliceBuf(b.v, 0, n)), nil
}

// fill copies a queued message's payload (what detach or the dispatcher made: a 1-D slice,
// or the encoding of objects) into the first n elements of the buffer.
func (b *pbuf) fill(data any, n int) error {
	switch {
	case b.dtype == Object:
		return decodeObjects(data.([]byte), b.objs, n)
	case b.rows != nil:
		off := 0
		return b.eachRow(n, func(seg any) error {
			off += copyBuf(seg, sliceBuf(data, off, n))
			return nil
		})
	}
	copyBuf(b.v, data)
	return nil
}

// eachRow calls f with the rows of a 2-D buffer, in order, cut to hold n elements in all.
func (b *pbuf) eachRow(n int, f func(seg any) error) error {
	for _, row := range b.rows {
		if n == 0 {
			break
		}
		_, k, _ := bufInfo(row)
		if k = min(k, n); k > 0 {
			if err := f(sliceBuf(row, 0, k)); err != nil {
				return err
			}
		}
		n -= k
	}
	return nil
}
