package serialization

import (
	"bytes"
	"testing"
)

// primBench is one primitive type for BenchmarkPrim: how to write the i-th
// value and how to read one back.
type primBench struct {
	name  string
	size  int64
	write func(w *Writer, i int) error
	read  func(r *Reader) error
}

func readDiscard[T any](f func() (T, error)) error {
	_, err := f()
	return err
}

var primBenches = []primBench{
	{"bool", 1, func(w *Writer, i int) error { return w.WriteBool(i&1 == 1) }, func(r *Reader) error { return readDiscard(r.ReadBool) }},
	{"byte", 1, func(w *Writer, i int) error { return w.WriteByte(byte(i)) }, func(r *Reader) error { return readDiscard(r.ReadByte) }},
	{"int8", 1, func(w *Writer, i int) error { return w.WriteInt8(int8(i)) }, func(r *Reader) error { return readDiscard(r.ReadInt8) }},
	{"int16", 2, func(w *Writer, i int) error { return w.WriteInt16(int16(i)) }, func(r *Reader) error { return readDiscard(r.ReadInt16) }},
	{"uint16", 2, func(w *Writer, i int) error { return w.WriteUint16(uint16(i)) }, func(r *Reader) error { return readDiscard(r.ReadUint16) }},
	{"int32", 4, func(w *Writer, i int) error { return w.WriteInt32(int32(i)) }, func(r *Reader) error { return readDiscard(r.ReadInt32) }},
	{"uint32", 4, func(w *Writer, i int) error { return w.WriteUint32(uint32(i)) }, func(r *Reader) error { return readDiscard(r.ReadUint32) }},
	{"int64", 8, func(w *Writer, i int) error { return w.WriteInt64(int64(i)) }, func(r *Reader) error { return readDiscard(r.ReadInt64) }},
	{"uint64", 8, func(w *Writer, i int) error { return w.WriteUint64(uint64(i)) }, func(r *Reader) error { return readDiscard(r.ReadUint64) }},
	{"int", 8, func(w *Writer, i int) error { return w.WriteInt(i) }, func(r *Reader) error { return readDiscard(r.ReadInt) }},
	{"uint", 8, func(w *Writer, i int) error { return w.WriteUint(uint(i)) }, func(r *Reader) error { return readDiscard(r.ReadUint) }},
	{"float32", 4, func(w *Writer, i int) error { return w.WriteFloat32(float32(i)) }, func(r *Reader) error { return readDiscard(r.ReadFloat32) }},
	{"float64", 8, func(w *Writer, i int) error { return w.WriteFloat64(float64(i)) }, func(r *Reader) error { return readDiscard(r.ReadFloat64) }},
	{"string", 12, func(w *Writer, i int) error { return w.WriteString("ibis-go!") }, func(r *Reader) error { return readDiscard(r.ReadString) }},
}

// BenchmarkPrim writes and reads each primitive type, 1024 values a message,
// in both byte orders; the cost per value includes a share of the message's.
func BenchmarkPrim(b *testing.B) {
	for _, o := range benchOrders {
		for _, p := range primBenches {
			b.Run("write/"+o.name+"/"+p.name, func(b *testing.B) {
				w := NewWriter(KindData, &discardSink{}, WithByteOrder(o.order))
				b.ReportAllocs()
				b.SetBytes(p.size)
				for i := 0; b.Loop(); i++ {
					if err := p.write(w, i); err != nil {
						b.Fatal(err)
					}
					if i%1024 == 1023 {
						_, _ = w.Finish()
					}
				}
			})
			b.Run("read/"+o.name+"/"+p.name, func(b *testing.B) {
				sink := &memSink{}
				w := NewWriter(KindData, sink, WithByteOrder(o.order))
				for i := range 1024 {
					if err := p.write(w, i); err != nil {
						b.Fatal(err)
					}
				}
				_, _ = w.Finish()
				msg := sink.bytes()
				src := bytes.NewReader(msg)
				r := NewReader(KindData, src)
				b.ReportAllocs()
				b.SetBytes(p.size)
				for i := 0; b.Loop(); i++ {
					if i%1024 == 0 {
						if i > 0 {
							if err := r.Finish(); err != nil {
								b.Fatal(err)
							}
						}
						src.Reset(msg)
						if err := r.Next(); err != nil {
							b.Fatal(err)
						}
					}
					if err := p.read(r); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
