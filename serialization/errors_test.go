package serialization

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/bits"
	"strings"
	"testing"
	"testing/iotest"
)

// wantErr fails unless err wraps target and its text mentions every word.
func wantErr(t *testing.T, err, target error, words ...string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v does not wrap %v", err, target)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not mention %q", err, w)
		}
	}
}

func TestKindRestrictions(t *testing.T) {
	sink := &memSink{}
	wb := NewWriter(KindByte, sink)
	must(t, wb.WriteByte(7))
	must(t, wb.WriteArray([]byte{1, 2, 3}))
	wantErr(t, wb.WriteInt32(1), ErrUnsupported, "WriteInt32", "data", "byte")
	wantErr(t, wb.WriteBool(true), ErrUnsupported, "WriteBool")
	wantErr(t, wb.WriteString("x"), ErrUnsupported, "WriteString")
	wantErr(t, wb.WriteArray([]int32{1}), ErrUnsupported, "WriteArray([]int32)", "data")
	wantErr(t, wb.WriteArray([][]byte{{1}}), ErrUnsupported, "[][]uint8")
	wantErr(t, wb.WriteObject(1), ErrUnsupported, "WriteObject", "object", "byte")
	wd := NewWriter(KindData, sink)
	wantErr(t, wd.WriteObject("x"), ErrUnsupported, "WriteObject", "object", "data")
	wantErr(t, wd.WriteArray([]string{"a"}), ErrUnsupported, "[]string", "WriteObject")
	wantErr(t, wd.WriteArray(42), ErrUnsupported, "int")
	n := get[int64](t)(wb.Finish())
	if n != HeaderSize+8 {
		t.Fatalf("byte message is %d bytes, want %d", n, HeaderSize+8)
	}

	rb := NewReader(KindByte, bytes.NewReader(sink.bytes()))
	must(t, rb.Next())
	eq(t, get[byte](t)(rb.ReadByte()), 7)
	_, err := rb.ReadInt32()
	wantErr(t, err, ErrUnsupported, "ReadInt32", "data")
	wantErr(t, rb.ReadArray(make([]int8, 1)), ErrUnsupported, "ReadArray([]int8)")
	var s string
	wantErr(t, rb.ReadObject(&s), ErrUnsupported, "ReadObject", "object")
	got := make([]byte, 3)
	must(t, rb.ReadArray(got))
	eq(t, string(got), "\x01\x02\x03")
	must(t, rb.Finish())

	rd := NewReader(KindData, bytes.NewReader(nil))
	wantErr(t, rd.ReadObject(&s), ErrUnsupported, "object", "data")
	wantErr(t, rd.ReadArray([]string{}), ErrUnsupported, "[]string")

	bad := NewWriter(Kind(9), sink)
	wantErr(t, bad.WriteByte(1), ErrUnsupported, "kind 9")
	wantErr(t, NewWriter(KindData, nil).WriteInt32(1), ErrUnsupported, "Sink")
	wantErr(t, NewReader(Kind(-1), bytes.NewReader(nil)).Next(), ErrUnsupported, "kind -1")
	eq(t, KindObject.String(), "object")
	eq(t, Kind(5).String(), "Kind(5)")
}

func TestTypeMismatch(t *testing.T) {
	sink := &memSink{}
	w := NewWriter(KindData, sink)
	must(t, w.WriteInt32(5))
	must(t, w.WriteFloat64(2.5))
	get[int64](t)(w.Finish())
	r := NewReader(KindData, bytes.NewReader(sink.bytes()))
	must(t, r.Next())
	_, err := r.ReadInt64()
	wantErr(t, err, ErrTypeMismatch, "int64", "1 32-bit integer", "1 float64")
	// Nothing was consumed: the right reads still work.
	eq(t, get[int32](t)(r.ReadInt32()), 5)
	_, err = r.ReadInt32()
	wantErr(t, err, ErrTypeMismatch, "int32", "float64")
	eq(t, get[float64](t)(r.ReadFloat64()), 2.5)
	_, err = r.ReadFloat64()
	wantErr(t, err, ErrShortMessage, "float64")
	must(t, r.Finish())
	_, err = r.ReadByte()
	wantErr(t, err, ErrShortMessage, "Next")

	// A mismatch against a bulk packet names its type too.
	sink = &memSink{}
	w = NewWriter(KindData, sink, WithBulkThreshold(8))
	must(t, w.WriteArray([]uint16{1, 2, 3, 4, 5}))
	get[int64](t)(w.Finish())
	r = NewReader(KindData, bytes.NewReader(sink.bytes()))
	must(t, r.Next())
	_, err = r.ReadFloat32()
	wantErr(t, err, ErrTypeMismatch, "5 16-bit")
}

func TestEmptyMessage(t *testing.T) {
	sink := &memSink{}
	w := NewWriter(KindObject, sink)
	n := get[int64](t)(w.Finish())
	if n != HeaderSize || len(sink.calls) != 1 || len(sink.calls[0]) != 1 {
		t.Fatalf("empty message: %d bytes in %d calls", n, len(sink.calls))
	}
	eq(t, w.Count(), HeaderSize)
	n = get[int64](t)(w.Finish()) // a second, also empty, message
	eq(t, n, HeaderSize)
	r := NewReader(KindObject, bytes.NewReader(sink.bytes()))
	for range 2 {
		must(t, r.Next())
		_, err := r.ReadInt32()
		wantErr(t, err, ErrShortMessage)
		must(t, r.Finish())
		eq(t, r.Count(), HeaderSize)
	}
	eq(t, r.Next(), io.EOF)
	eq(t, r.Next(), io.EOF)
}

func TestFlushAndCount(t *testing.T) {
	sink := &memSink{}
	w := NewWriter(KindData, sink)
	must(t, w.Flush()) // nothing written: nothing sent
	eq(t, len(sink.calls), 0)
	must(t, w.WriteInt64(1))
	eq(t, w.Count(), 8)
	must(t, w.Flush())
	eq(t, len(sink.calls), 1)
	eq(t, w.Count(), HeaderSize+8)
	must(t, w.WriteInt16(2))
	n := get[int64](t)(w.Finish())
	eq(t, n, 2*HeaderSize+16)
	eq(t, w.Count(), n)
	r := NewReader(KindData, bytes.NewReader(sink.bytes()))
	must(t, r.Next())
	eq(t, get[int64](t)(r.ReadInt64()), 1)
	eq(t, get[int16](t)(r.ReadInt16()), 2)
	must(t, r.Finish())
	eq(t, r.Count(), n)
}

func TestFinishSkips(t *testing.T) {
	for _, src := range []string{"bytes", "onebyte", "bufio"} {
		t.Run(src, func(t *testing.T) {
			sink := &memSink{}
			w := NewWriter(KindData, sink, WithMaxPacketSize(128), WithBulkThreshold(256))
			for m := range 4 {
				for i := range 100 {
					must(t, w.WriteInt32(int32(i)))
				}
				must(t, w.WriteArray(fill[float64](1000, m)))
				must(t, w.WriteString(strings.Repeat("s", 300)))
				must(t, w.WriteInt64(int64(m)))
				get[int64](t)(w.Finish())
			}
			var in io.Reader = bytes.NewReader(sink.bytes())
			switch src {
			case "onebyte":
				in = iotest.OneByteReader(in) // no Discard method, tiny reads
			case "bufio":
				in = bufio.NewReaderSize(in, 16) // Discard, small buffer
			}
			r := NewReader(KindData, in)
			must(t, r.Next()) // read nothing, finish
			must(t, r.Finish())
			must(t, r.Next()) // read a little, let Next finish
			eq(t, get[int32](t)(r.ReadInt32()), 0)
			must(t, r.Next()) // stop inside the bulk packet
			for i := range 100 {
				eq(t, get[int32](t)(r.ReadInt32()), int32(i))
			}
			must(t, r.ReadArray(make([]float64, 10)))
			must(t, r.Finish())
			must(t, r.Next()) // the last message, fully
			for range 100 {
				get[int32](t)(r.ReadInt32())
			}
			f := make([]float64, 1000)
			must(t, r.ReadArray(f))
			if !sameBits(f, fill[float64](1000, 3)) {
				t.Fatal("last message differs")
			}
			eq(t, get[string](t)(r.ReadString()), strings.Repeat("s", 300))
			eq(t, get[int64](t)(r.ReadInt64()), 3)
			must(t, r.Finish())
			eq(t, r.Next(), io.EOF)
		})
	}
}

func TestAbandonedMessage(t *testing.T) {
	sink := &memSink{}
	w := NewWriter(KindData, sink)
	must(t, w.WriteInt32(1))
	must(t, w.Flush()) // part of the message reached the peer
	must(t, w.WriteInt32(2))
	w.Reset()
	eq(t, w.Count(), 0)
	must(t, w.WriteInt32(3))
	get[int64](t)(w.Finish())
	w.Reset() // after Finish: nothing to end
	must(t, w.WriteInt32(4))
	w.Reset() // never sent: dropped silently
	must(t, w.WriteInt32(5))
	get[int64](t)(w.Finish())

	r := NewReader(KindData, bytes.NewReader(sink.bytes()))
	must(t, r.Next())
	eq(t, get[int32](t)(r.ReadInt32()), 1)
	_, err := r.ReadInt32()
	wantErr(t, err, ErrShortMessage) // the abandoned message ended early
	must(t, r.Next())
	eq(t, get[int32](t)(r.ReadInt32()), 3)
	must(t, r.Next())
	eq(t, get[int32](t)(r.ReadInt32()), 5)
	eq(t, r.Next(), io.EOF)
}

// Abandon sends the End of a partly sent message at once, and nothing of one that
// sent no packet.
func TestAbandonSendsTheEndAtOnce(t *testing.T) {
	sink := &memSink{}
	w := NewWriter(KindData, sink)
	must(t, w.WriteInt32(1))
	must(t, w.Flush())
	must(t, w.WriteInt32(2))
	eq(t, w.Reached(), true)
	ended := get[bool](t)(w.Abandon())
	eq(t, ended, true)
	eq(t, len(sink.bytes()), 2*HeaderSize+8) // the End is out, before the next message
	must(t, w.WriteInt32(3))
	eq(t, w.Reached(), false)
	ended = get[bool](t)(w.Abandon())
	eq(t, ended, false)
	eq(t, len(sink.bytes()), 2*HeaderSize+8) // nothing of message 2
	must(t, w.WriteInt32(4))
	get[int64](t)(w.Finish())

	r := NewReader(KindData, bytes.NewReader(sink.bytes()))
	must(t, r.Next())
	eq(t, get[int32](t)(r.ReadInt32()), 1)
	_, err := r.ReadInt32()
	wantErr(t, err, ErrShortMessage)
	must(t, r.Next())
	eq(t, get[int32](t)(r.ReadInt32()), 4)
	must(t, r.Finish())
	eq(t, r.Next(), io.EOF)
}

func TestResetsKeepOneEndForAnAbandonedMessage(t *testing.T) {
	// However many Resets follow a partly sent message, exactly one End
	// packet closes it at the receiver before the next message.
	for _, tc := range []struct {
		name  string
		reset func(w *Writer)
	}{
		{"one Reset", func(w *Writer) { w.Reset() }},
		{"two Resets", func(w *Writer) { w.Reset(); w.Reset() }},
		{"three Resets", func(w *Writer) { w.Reset(); w.Reset(); w.Reset() }},
		{"a write dropped between Resets", func(w *Writer) {
			w.Reset()
			must(t, w.WriteInt32(99)) // never sent: dropped by the next Reset
			w.Reset()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &memSink{}
			w := NewWriter(KindData, sink)
			must(t, w.WriteInt32(1))
			must(t, w.Flush()) // part of message 1 reaches the peer
			tc.reset(w)
			must(t, w.WriteInt32(2))
			get[int64](t)(w.Finish())
			w.Reset() // after Finish: nothing owed
			must(t, w.WriteInt32(3))
			get[int64](t)(w.Finish())

			r := NewReader(KindData, bytes.NewReader(sink.bytes()))
			must(t, r.Next())
			eq(t, get[int32](t)(r.ReadInt32()), 1)
			_, err := r.ReadInt32()
			wantErr(t, err, ErrShortMessage) // the abandoned message ended early
			must(t, r.Next())
			eq(t, get[int32](t)(r.ReadInt32()), 2)
			must(t, r.Finish())
			must(t, r.Next())
			eq(t, get[int32](t)(r.ReadInt32()), 3)
			must(t, r.Finish())
			eq(t, r.Next(), io.EOF)
			// One data packet and one End for message 1, one packet each
			// for messages 2 and 3.
			eq(t, len(sink.bytes()), 4*HeaderSize+3*8)
		})
	}
}

func TestResetAfterSentEndQueuesAnother(t *testing.T) {
	// The End owed for message 1 goes out with the start of message 2;
	// abandoning message 2 then owes an End of its own.
	sink := &memSink{}
	w := NewWriter(KindData, sink)
	must(t, w.WriteInt32(1))
	must(t, w.Flush())
	w.Reset()
	must(t, w.WriteInt32(2))
	must(t, w.Flush())
	w.Reset()
	w.Reset()
	must(t, w.WriteInt32(3))
	get[int64](t)(w.Finish())

	r := NewReader(KindData, bytes.NewReader(sink.bytes()))
	for _, v := range []int32{1, 2} {
		must(t, r.Next())
		eq(t, get[int32](t)(r.ReadInt32()), v)
		_, err := r.ReadInt32()
		wantErr(t, err, ErrShortMessage)
	}
	must(t, r.Next())
	eq(t, get[int32](t)(r.ReadInt32()), 3)
	must(t, r.Finish())
	eq(t, r.Next(), io.EOF)
}

func TestSinkErrorIsSticky(t *testing.T) {
	boom := errors.New("connection reset")
	sink := &memSink{err: boom}
	w := NewWriter(KindData, sink)
	must(t, w.WriteInt32(1))
	_, err := w.Finish()
	if !errors.Is(err, boom) {
		t.Fatalf("Finish error %v does not wrap the sink's", err)
	}
	if !errors.Is(w.WriteInt32(2), boom) || !errors.Is(w.Flush(), boom) {
		t.Fatal("the sink error is not sticky")
	}
	sink.err = nil
	w.Reset()
	must(t, w.WriteInt32(3))
	get[int64](t)(w.Finish())
	r := NewReader(KindData, bytes.NewReader(sink.bytes()))
	must(t, r.Next())
	eq(t, get[int32](t)(r.ReadInt32()), 3)
}

func Test2DShapeMismatch(t *testing.T) {
	sink := &memSink{}
	w := NewWriter(KindData, sink, WithBulkThreshold(64))
	must(t, w.WriteArray([][]int32{make([]int32, 4), make([]int32, 4), make([]int32, 40)}))
	must(t, w.WriteInt32(77))
	must(t, w.WriteArray([][]float64{{1}, {2}}))
	must(t, w.WriteInt32(78))
	get[int64](t)(w.Finish())
	r := NewReader(KindData, bytes.NewReader(sink.bytes()))
	must(t, r.Next())
	err := r.ReadArray([][]int32{make([]int32, 4), make([]int32, 5), make([]int32, 40)})
	wantErr(t, err, ErrTypeMismatch, "3 rows of 4 to 40 elements", "row 1: 4 elements written, 5 in the destination")
	eq(t, get[int32](t)(r.ReadInt32()), 77) // the slice was skipped
	err = r.ReadArray([][]float64{{0}, {0}, {0}})
	wantErr(t, err, ErrTypeMismatch, "2 rows of 1 elements", "3 rows of 1 elements")
	eq(t, get[int32](t)(r.ReadInt32()), 78)
	must(t, r.Finish())
}

func TestUnsupportedValues(t *testing.T) {
	w := NewWriter(KindObject, &memSink{})
	wantErr(t, w.WriteObject(make(chan int)), ErrUnsupported, "chan int")
	wantErr(t, w.WriteObject(func() {}), ErrUnsupported)
	// Nothing half-written: the message is still empty.
	eq(t, get[int64](t)(w.Finish()), HeaderSize)
}

func TestIntWidth(t *testing.T) {
	// int and uint travel as 64 bits; a 32-bit reader refuses what does not
	// fit instead of truncating it.
	sink := &memSink{}
	w := NewWriter(KindData, sink)
	must(t, w.WriteInt64(1<<40))
	must(t, w.WriteArray([]int64{-1 << 40}))
	must(t, w.WriteUint64(1<<40))
	get[int64](t)(w.Finish())
	r := NewReader(KindData, bytes.NewReader(sink.bytes()))
	must(t, r.Next())
	v, err1 := r.ReadInt()
	a := make([]int, 1)
	err2 := r.ReadArray(a)
	u, err3 := r.ReadUint()
	if bits.UintSize == 64 {
		must(t, firstErr(err1, err2, err3))
		if int64(v) != 1<<40 || int64(a[0]) != -1<<40 || uint64(u) != 1<<40 {
			t.Fatalf("got %d %d %d", v, a[0], u)
		}
		return
	}
	wantErr(t, err1, ErrTooLarge, "32-bit int")
	wantErr(t, err2, ErrTooLarge, "32-bit int")
	wantErr(t, err3, ErrTooLarge, "32-bit uint")
}
