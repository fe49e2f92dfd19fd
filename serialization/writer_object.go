package serialization

import (
	"bytes"
	"fmt"
	"math"

	"github.com/vmihailenco/msgpack/v5"
)

// maxRetainedObjBuf is the largest msgpack buffer a Writer keeps for the
// next object; a larger one is released so one huge object does not pin
// its memory for the life of the connection.
const maxRetainedObjBuf = 1 << 20

// WriteObject writes an arbitrary value so that ReadObject can rebuild it.
// The value starts with a type tag. nil, strings, primitives, and the 1-D and
// 2-D primitive slices WriteArray accepts take fast paths that bypass
// msgpack (slices keep their nil-ness and are sent from their memory when
// large, like WriteArray). A value whose type is or reaches a struct goes
// through the object codec, a plan compiled once per type (codec.go): as
// fast as a hand-written serializer, shared pointers and cycles kept, the
// receiver's type checked against a fingerprint of the sender's. Every
// other value (and a type the codec does not cover: one that reaches an
// interface, has a msgpack struct tag or marshals itself) is encoded with
// msgpack (v5) and sent as a length and the encoded bytes; msgpack does not
// preserve pointer sharing, and a cyclic value cannot be encoded. Only
// KindObject allows it.
func (w *Writer) WriteObject(v any) error {
	if w.kind != KindObject {
		return w.kind.needObject("WriteObject")
	}
	switch x := v.(type) {
	case nil:
		return w.writeTagOnly(tagNil)
	case string:
		return w.writeStringObject(x)
	case bool:
		var b uint64
		if x {
			b = 1
		}
		return w.writeScalar(eBool, b)
	case uint8:
		return w.writeScalar(eUint8, uint64(x))
	case int8:
		return w.writeScalar(eInt8, uint64(uint8(x)))
	case int16:
		return w.writeScalar(eInt16, uint64(uint16(x)))
	case uint16:
		return w.writeScalar(eUint16, uint64(x))
	case int32:
		return w.writeScalar(eInt32, uint64(uint32(x)))
	case uint32:
		return w.writeScalar(eUint32, uint64(x))
	case int64:
		return w.writeScalar(eInt64, uint64(x))
	case uint64:
		return w.writeScalar(eUint64, x)
	case int:
		return w.writeScalar(eInt, uint64(int64(x)))
	case uint:
		return w.writeScalar(eUint, uint64(x))
	case float32:
		return w.writeScalar(eFloat32, uint64(math.Float32bits(x)))
	case float64:
		return w.writeScalar(eFloat64, math.Float64bits(x))
	}
	if handled, err := w.writeArray(v, true); handled {
		return err
	}
	if handled, err := w.writeCodec(v); handled {
		return err
	}
	return w.writeMsgpack(v)
}

// emitTag writes an object tag byte.
func (w *Writer) emitTag(tag byte) error {
	b, err := w.space(secI8, 1, 1)
	if err != nil {
		return err
	}
	b[0] = tag
	return nil
}

func (w *Writer) writeTagOnly(tag byte) error {
	if err := w.ready(); err != nil {
		return err
	}
	p := w.plan()
	p.small(1, 1)
	if err := w.check(p, "an object"); err != nil {
		return err
	}
	return w.emitTag(tag)
}

func (w *Writer) writeStringObject(s string) error {
	if err := w.ready(); err != nil {
		return err
	}
	p := w.plan()
	p.small(1, 1)
	p.string(len(s))
	if err := w.checkString(p, len(s)); err != nil {
		return err
	}
	if err := w.emitTag(tagString); err != nil {
		return err
	}
	return w.emitString(s)
}

// writeScalar writes a tagged primitive given as its bits.
func (w *Writer) writeScalar(c elemCode, bits uint64) error {
	if err := w.ready(); err != nil {
		return err
	}
	sec := elems[c].sec
	esz := secSize[sec]
	p := w.plan()
	p.small(1, 1)
	p.small(int64(esz), int64(esz))
	if err := w.check(p, "an object"); err != nil {
		return err
	}
	if err := w.emitTag(tagScalar + byte(c)); err != nil {
		return err
	}
	b, err := w.space(sec, esz, esz)
	if err != nil {
		return err
	}
	switch esz {
	case 1:
		b[0] = byte(bits)
	case 2:
		w.put16(b, uint16(bits))
	case 4:
		w.put32(b, uint32(bits))
	default:
		w.put64(b, bits)
	}
	return nil
}

// writeMsgpack encodes v with msgpack and writes tag, length and bytes.
func (w *Writer) writeMsgpack(v any) error {
	if err := w.ready(); err != nil {
		return err
	}
	if w.enc == nil {
		w.enc = msgpack.NewEncoder(&w.objBuf)
	}
	w.objBuf.Reset()
	w.enc.Reset(&w.objBuf)
	if err := encodeSafely(w.enc, v); err != nil {
		return fmt.Errorf("%w: WriteObject: msgpack cannot encode %T: %w", ErrUnsupported, v, err)
	}
	err := w.writeBlob(tagMsgpack, w.objBuf.Bytes(), fmt.Sprintf("a msgpack-encoded %T", v))
	if w.objBuf.Cap() > maxRetainedObjBuf {
		w.objBuf = bytes.Buffer{}
	}
	return err
}

// writeBlob writes an object encoded into b: tag, length and bytes. what
// names it in an error.
func (w *Writer) writeBlob(tag byte, b []byte, what string) error {
	p := w.plan()
	p.small(1, 1)
	p.small(8, 8)
	p.small(int64(len(b)), 1)
	if f := p.final(); f > w.cfg.maxMessage {
		return w.tooLarge(what, f)
	}
	err := w.emitTag(tag)
	if err == nil {
		err = w.emitInt64s(func(int) int64 { return int64(len(b)) }, 1)
	}
	if err == nil {
		err = w.emitSmall(secI8, b, 1)
	}
	return err
}

// encodeSafely runs the msgpack encoder, turning a panic inside it (or in a
// value's custom encoder) into an error.
func encodeSafely(enc *msgpack.Encoder, v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("msgpack encoder panicked: %v", p)
		}
	}()
	return enc.Encode(v)
}
