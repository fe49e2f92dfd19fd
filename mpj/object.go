package mpj

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ibisgo/ibis/ipl"
)

// Objects travel as one msgpack array of their values, encoded by the sender and decoded
// by the receiver element by element into the receive buffer: the receiver learns the Go
// type only when a receive matches, so a message that comes first is queued as these bytes,
// and decoding into the program's own slice bounds what a corrupt message can make it
// allocate by the slice it gave (msgpack itself reads long strings and byte slices in
// bounded steps).

// maxObjectBytes bounds the encoding of one message's objects (as ipl's largest message).
const maxObjectBytes = 1 << 40

// readChunk is the step in which the encoding is read, so that memory grows with the bytes
// that really arrive, not with the length a header claims.
const readChunk = 1 << 20

// encodeObjects encodes the first n elements of the slice rv.
func encodeObjects(rv reflect.Value, n int) (_ []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: mpj: encoding a []%s: %v", ipl.ErrUnsupported, rv.Type().Elem(), r)
		}
	}()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	if err := enc.EncodeArrayLen(n); err != nil {
		return nil, fmt.Errorf("mpj: encoding objects: %w", err)
	}
	for i := range n {
		if err := enc.EncodeValue(rv.Index(i)); err != nil {
			return nil, fmt.Errorf("%w: mpj: encoding object %d (%s): %w", ipl.ErrUnsupported, i, rv.Type().Elem(), err)
		}
	}
	return buf.Bytes(), nil
}

// decodeObjects decodes an encoding of n objects into the first n elements of the slice
// rv, each reset to its zero value first.
func decodeObjects(data []byte, rv reflect.Value, n int) (err error) {
	defer func() { // a third party's decoder of network bytes: a panic in it is bad input
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: mpj: decoding objects into a []%s: %v", ipl.ErrTypeMismatch, rv.Type().Elem(), r)
		}
	}()
	dec := msgpack.NewDecoder(bytes.NewReader(data))
	k, err := dec.DecodeArrayLen()
	if err != nil {
		return fmt.Errorf("%w: mpj: decoding objects: %w", ipl.ErrTypeMismatch, err)
	}
	if k != n || n > rv.Len() {
		return fmt.Errorf("%w: mpj: the objects' encoding holds %d values, the header says %d", ipl.ErrTypeMismatch, k, n)
	}
	for i := range n {
		e := rv.Index(i)
		e.SetZero()
		if err := dec.DecodeValue(e); err != nil {
			return fmt.Errorf("%w: mpj: decoding object %d into a %s: %w", ipl.ErrTypeMismatch, i, e.Type(), err)
		}
	}
	return nil
}

// writeObjectBytes puts an encoding on a message: its length, then its bytes.
func writeObjectBytes(m ipl.WriteMessage, data []byte) error {
	return errors.Join(m.WriteInt64(int64(len(data))), m.WriteArray(data))
}

// readObjectBytes takes an encoding from a message, growing its buffer as bytes arrive.
func readObjectBytes(m ipl.ReadMessage) ([]byte, error) {
	n, err := m.ReadInt64()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > maxObjectBytes {
		return nil, fmt.Errorf("%w: mpj: objects' encoding of %d bytes", ipl.ErrTypeMismatch, n)
	}
	var data []byte
	for int64(len(data)) < n {
		k := int(min(n-int64(len(data)), readChunk))
		data = append(data, make([]byte, k)...)
		if err := m.ReadArray(data[len(data)-k:]); err != nil {
			return nil, err
		}
	}
	return data, nil
}
