package serialization

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// packet builds a raw packet: header in little-endian order plus body
// (padding is the caller's business, to allow malformed packets).
func packet(flags byte, counts [numSections]uint32, body ...byte) []byte {
	var h [HeaderSize]byte
	putHeader(h[:], orderLittle, flags, &counts)
	return append(h[:], body...)
}

// le encodes values little endian, for hand-built bodies.
func le(vals ...any) []byte {
	var b bytes.Buffer
	for _, v := range vals {
		_ = binary.Write(&b, binary.LittleEndian, v)
	}
	return b.Bytes()
}

// allocatedBy returns the bytes f allocates.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// leastAllocatedBy runs f three times and returns the least it allocated:
// TotalAlloc counts the whole process, so a single reading can include a few
// KiB of the runtime's or the test framework's own. f must do the same work
// each time.
func leastAllocatedBy(f func()) uint64 {
	least := allocatedBy(f)
	for range 2 {
		least = min(least, allocatedBy(f))
	}
	return least
}

func TestReaderRejectsOversize(t *testing.T) {
	big := packet(FlagEnd|FlagBulk, [numSections]uint32{secI8: 4e9})
	huge := packet(FlagEnd, [numSections]uint32{secF64: 4e9})
	for _, tc := range []struct {
		name  string
		data  []byte
		opts  []ReaderOption
		words []string
	}{
		{"bulk claim over default limit", big, nil, []string{"over the limit of 1073741824"}},
		{"small claim over packet limit", huge, []ReaderOption{WithReaderMaxMessageSize(1 << 40)}, []string{"maximum packet size"}},
		{"small packet over configured size", packet(FlagEnd, [numSections]uint32{secI64: 100}, make([]byte, 800)...),
			[]ReaderOption{WithReaderMaxPacketSize(512)}, []string{"800 bytes", "512"}},
		{"message over configured size", append(packet(0, [numSections]uint32{secI64: 10}, make([]byte, 80)...),
			packet(FlagEnd, [numSections]uint32{secI64: 10}, make([]byte, 80)...)...),
			[]ReaderOption{WithReaderMaxMessageSize(200)}, []string{"224 bytes", "200"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			alloc := allocatedBy(func() {
				r := NewReader(KindData, bytes.NewReader(tc.data), tc.opts...)
				if err = r.Next(); err == nil {
					err = r.Finish()
				}
			})
			wantErr(t, err, ErrTooLarge, tc.words...)
			wantErr(t, err, ErrCorrupt)
			if alloc > 1<<20 {
				t.Fatalf("rejecting the claim allocated %d bytes", alloc)
			}
		})
	}
}

func TestClaimsAllocateOnlyWhatArrives(t *testing.T) {
	// Each stream announces far more data than it holds; the reads must fail
	// without allocating the announced amount.
	bulkClaim := packet(FlagEnd|FlagBulk, [numSections]uint32{secI8: 4e9}, make([]byte, 1000)...)
	strLen := append(packet(0, [numSections]uint32{secI32: 1}, le(int32(2e9))...), bulkClaim...)
	f64Claim := packet(FlagEnd|FlagBulk, [numSections]uint32{secF64: 4e9}, make([]byte, 1000)...)
	objLen := append(packet(0, [numSections]uint32{secI64: 1, secI8: 1}, append(le(int64(4e9)), tagSlice+byte(eFloat64), 0, 0, 0, 0, 0, 0, 0)...), f64Claim...)
	mpLen := append(packet(0, [numSections]uint32{secI64: 1, secI8: 1}, append(le(int64(5e9)), tagMsgpack, 0, 0, 0, 0, 0, 0, 0)...), bulkClaim...)
	rows := append(packet(0, [numSections]uint32{secI64: 3, secI8: 1},
		append(le(int64(2), int64(2e9), int64(2e9)), tagSlice2D+byte(eFloat64), 0, 0, 0, 0, 0, 0, 0)...), f64Claim...)
	opts := []ReaderOption{WithReaderMaxMessageSize(1 << 46)}
	for _, tc := range []struct {
		name string
		data []byte
		read func(r *Reader) error
	}{
		// The 10 bytes exist; Finish then fails on the rest.
		{"array", bulkClaim, func(r *Reader) error { return r.ReadArray(make([]byte, 10)) }},
		{"string", strLen, func(r *Reader) error { _, err := r.ReadString(); return err }},
		{"object slice", objLen, func(r *Reader) error { var f []float64; return r.ReadObject(&f) }},
		{"msgpack", mpLen, func(r *Reader) error { var v any; return r.ReadObject(&v) }},
		{"2-D object", rows, func(r *Reader) error { var v [][]float64; return r.ReadObject(&v) }},
		{"finish", bulkClaim, func(r *Reader) error { return r.Finish() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			alloc := allocatedBy(func() {
				r := NewReader(KindObject, bytes.NewReader(tc.data), opts...)
				if err = r.Next(); err == nil {
					if err = tc.read(r); err == nil {
						err = r.Finish()
					}
				}
			})
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			if alloc > 4<<20 {
				t.Fatalf("a claim of gigabytes allocated %d bytes", alloc)
			}
		})
	}
}

func TestClaimsOverBudget(t *testing.T) {
	// Lengths the rest of the message cannot hold fail before allocating.
	str := packet(FlagEnd, [numSections]uint32{secI32: 2}, le(int32(1e9), int32(0))...)
	r := NewReader(KindData, bytes.NewReader(str), WithReaderMaxMessageSize(1<<20))
	must(t, r.Next())
	_, err := r.ReadString()
	wantErr(t, err, ErrTooLarge, "rest of the message")
	wantErr(t, err, ErrCorrupt)

	obj := packet(FlagEnd, [numSections]uint32{secI64: 1, secI8: 1}, append(le(int64(1e9)), tagSlice+byte(eInt64), 0, 0, 0, 0, 0, 0, 0)...)
	r = NewReader(KindObject, bytes.NewReader(obj), WithReaderMaxMessageSize(1<<20))
	must(t, r.Next())
	var s []int64
	wantErr(t, r.ReadObject(&s), ErrTooLarge, "[]int64")
}

func TestWriterMessageLimit(t *testing.T) {
	ops := genOps(bytes.Repeat([]byte("serialization limits test 0123456789"), 20))
	opts := []WriterOption{WithMaxPacketSize(256), WithBulkThreshold(128)}
	total := func(limit int64) (n int64, written int) {
		w := NewWriter(KindObject, &memSink{}, append(opts, WithMaxMessageSize(limit))...)
		for _, op := range ops {
			before := w.Count()
			p := w.plan()
			if err := op.write(w); err != nil {
				if !errors.Is(err, ErrTooLarge) {
					t.Fatalf("op %s: %v", op.name, err)
				}
				if w.Count() != before || w.plan() != p {
					t.Fatalf("op %s failed but wrote something", op.name)
				}
				break
			}
			written++
		}
		n, err := w.Finish()
		must(t, err)
		return n, written
	}
	full, all := total(0)
	if all != len(ops) {
		t.Fatalf("unlimited writer wrote %d of %d ops", all, len(ops))
	}
	exact, n := total(full)
	if exact != full || n != all {
		t.Fatalf("with the limit at the message size (%d) it wrote %d ops, %d bytes", full, n, exact)
	}
	for limit := full - 1; limit > full-600; limit -= 7 {
		size, n := total(limit)
		if size > limit || n == all {
			t.Fatalf("limit %d: %d ops, %d bytes", limit, n, size)
		}
	}
}

func TestWriterOversizeValues(t *testing.T) {
	w := NewWriter(KindObject, &memSink{}, WithMaxMessageSize(1000))
	wantErr(t, w.WriteArray(make([]float64, 200)), ErrTooLarge, "[]float64", "1000")
	wantErr(t, w.WriteString(strings.Repeat("x", 2000)), ErrTooLarge, "string")
	wantErr(t, w.WriteObject(make([][]int32, 300)), ErrTooLarge, "[][]int32")
	wantErr(t, w.WriteObject(map[string]string{"k": strings.Repeat("v", 1000)}), ErrTooLarge, "msgpack")
	for range 121 { // (1000-32)/8 values fit
		must(t, w.WriteInt64(1))
	}
	wantErr(t, w.WriteInt64(1), ErrTooLarge)
	n := get[int64](t)(w.Finish())
	if n > 1000 {
		t.Fatalf("message of %d bytes over the limit", n)
	}
}

// SetMaxMessageSize lowers and raises the limit between messages; a write it refuses
// says whose limit it was.
func TestWriterSetMaxMessageSize(t *testing.T) {
	w := NewWriter(KindData, &memSink{})
	must(t, w.WriteArray(make([]byte, 4000)))
	get[int64](t)(w.Finish())
	w.SetMaxMessageSize(1000, "the receiver's")
	wantErr(t, w.WriteArray(make([]byte, 4000)), ErrTooLarge, "1000", "(the receiver's)")
	must(t, w.WriteArray(make([]byte, 900)))
	if n := get[int64](t)(w.Finish()); n > 1000 {
		t.Fatalf("message of %d bytes over the limit", n)
	}
	w.SetMaxMessageSize(0, "") // no limit
	must(t, w.WriteArray(make([]byte, 4000)))
	get[int64](t)(w.Finish())
}

// corruptible returns a valid message of one int32 and a function that returns a copy
// of it with byte i set to v, to corrupt a header one field at a time.
func corruptible() (valid []byte, mod func(i int, v byte) []byte) {
	valid = packet(FlagEnd, [numSections]uint32{secI32: 1}, 1, 0, 0, 0, 0, 0, 0, 0)
	return valid, func(i int, v byte) []byte {
		b := bytes.Clone(valid)
		b[i] = v
		return b
	}
}

func TestCorruptStreams(t *testing.T) {
	valid, mod := corruptible()
	for _, tc := range []struct {
		name   string
		data   []byte
		read   func(r *Reader) error
		target error
		words  []string
	}{
		{"bad magic", mod(0, 0x42), nil, ErrCorrupt, []string{"magic", "0x42"}},
		{"bad order", mod(1, 2), nil, ErrCorrupt, []string{"byte order 2"}},
		{"unknown flag", mod(2, 0x09), nil, ErrCorrupt, []string{"flags 0x09"}},
		{"reserved byte", mod(5, 1), nil, ErrCorrupt, []string{"reserved"}},
		{"truncated header", valid[:10], nil, ErrCorrupt, []string{"truncated packet header", "10 of 32"}},
		{"truncated body", valid[:36], nil, ErrCorrupt, []string{"truncated packet body", "4 of 8"}},
		{"non-zero padding", mod(37, 1), nil, ErrCorrupt, []string{"padding"}},
		{"bulk of two types", packet(FlagBulk|FlagEnd, [numSections]uint32{secI8: 8, secI16: 4}, make([]byte, 16)...), nil, ErrCorrupt, []string{"exactly one type", "2 types"}},
		{"empty bulk", packet(FlagBulk|FlagEnd, [numSections]uint32{}), nil, ErrCorrupt, []string{"0 types"}},
		{"close with body", packet(FlagClose, [numSections]uint32{secI8: 1}, make([]byte, 8)...), nil, ErrCorrupt, []string{"malformed close"}},
		{"close with end", packet(FlagClose|FlagEnd, [numSections]uint32{}), nil, ErrCorrupt, []string{"malformed close"}},
		{"close inside a message", append(packet(0, [numSections]uint32{}), packet(FlagClose, [numSections]uint32{})...),
			func(r *Reader) error { return r.Finish() }, ErrClosedByPeer, []string{"middle of a message"}},
		{"eof inside a message", packet(0, [numSections]uint32{}),
			func(r *Reader) error { return r.Finish() }, ErrCorrupt, []string{"truncated packet header", "0 of 32"}},
		{"bulk padding", packet(FlagBulk|FlagEnd, [numSections]uint32{secI8: 3}, 1, 2, 3, 0, 9, 0, 0, 0),
			func(r *Reader) error { return r.ReadArray(make([]byte, 3)) }, ErrCorrupt, []string{"bulk packet padding"}},
		{"truncated bulk", packet(FlagBulk|FlagEnd, [numSections]uint32{secI64: 3}, make([]byte, 20)...),
			func(r *Reader) error { return r.ReadArray(make([]int64, 3)) }, ErrCorrupt, []string{"truncated bulk packet body"}},
		{"truncated bulk skipped", packet(FlagBulk|FlagEnd, [numSections]uint32{secI64: 3}, make([]byte, 20)...),
			func(r *Reader) error { return r.Finish() }, ErrCorrupt, []string{"truncated bulk packet body"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, src := range []func([]byte) io.Reader{
				func(b []byte) io.Reader { return bytes.NewReader(b) },
				func(b []byte) io.Reader { return struct{ io.Reader }{bytes.NewReader(b)} }, // no Discard
				func(b []byte) io.Reader { return bufio.NewReaderSize(bytes.NewReader(b), 16) },
			} {
				r := NewReader(KindData, src(tc.data))
				err := r.Next()
				if err == nil && tc.read != nil {
					err = tc.read(r)
				}
				wantErr(t, err, tc.target, tc.words...)
				// The failure is sticky.
				if err2 := r.Next(); err2 != err {
					t.Fatalf("after %v, Next returned %v", err, err2)
				}
			}
		})
	}
}

func TestCorruptContent(t *testing.T) {
	// Content errors leave the framing intact: Finish and Next still work.
	for _, tc := range []struct {
		name  string
		msg   []byte
		read  func(r *Reader) error
		words []string
	}{
		{"bool byte", packet(FlagEnd, [numSections]uint32{secI8: 1}, 7, 0, 0, 0, 0, 0, 0, 0),
			func(r *Reader) error { _, err := r.ReadBool(); return err }, []string{"bool", "got 7"}},
		{"bool array", packet(FlagEnd, [numSections]uint32{secI8: 3}, 0, 1, 5, 0, 0, 0, 0, 0),
			func(r *Reader) error {
				b := make([]bool, 3)
				err := r.ReadArray(b)
				if AsBytes(b)[2] != 1 { // never leave an invalid bool behind
					t.Fatalf("bool byte left as %d", AsBytes(b)[2])
				}
				return err
			}, []string{"element 2"}},
		{"object tag", packet(FlagEnd, [numSections]uint32{secI8: 1}, 99, 0, 0, 0, 0, 0, 0, 0),
			func(r *Reader) error { var v any; return r.ReadObject(&v) }, []string{"unknown object tag 99"}},
		{"string length", packet(FlagEnd, [numSections]uint32{secI32: 1}, le(int32(-5), int32(0))...),
			func(r *Reader) error { _, err := r.ReadString(); return err }, []string{"negative string length -5"}},
		{"row count", packet(FlagEnd, [numSections]uint32{secI64: 1}, le(int64(-7))...),
			func(r *Reader) error { return r.ReadArray([][]int8{}) }, []string{"2-D row count -7"}},
		{"msgpack depth", msgpackPacket(append(bytes.Repeat([]byte{0x91}, 100000), 0xc0)),
			func(r *Reader) error { var v any; return r.ReadObject(&v) }, []string{"deeper than 512"}},
		{"msgpack count", msgpackPacket([]byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0}),
			func(r *Reader) error { var v any; return r.ReadObject(&v) }, []string{"announces 4294967295 items"}},
		{"msgpack invalid byte", msgpackPacket([]byte{0xc1}),
			func(r *Reader) error { var v any; return r.ReadObject(&v) }, []string{"0xc1"}},
		{"msgpack trailing bytes", msgpackPacket([]byte{0xc0, 0xc0}),
			func(r *Reader) error { var v any; return r.ReadObject(&v) }, []string{"1 trailing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			follow := packet(FlagEnd, [numSections]uint32{secI32: 1}, le(int32(42), int32(0))...)
			r := NewReader(KindObject, bytes.NewReader(append(bytes.Clone(tc.msg), follow...)))
			must(t, r.Next())
			wantErr(t, tc.read(r), ErrCorrupt, tc.words...)
			must(t, r.Next())
			eq(t, get[int32](t)(r.ReadInt32()), 42)
		})
	}
}

// msgpackPacket wraps raw bytes as a msgpack object message.
func msgpackPacket(mp []byte) []byte {
	n := len(mp) + 1
	body := append(le(int64(len(mp))), tagMsgpack)
	body = append(body, mp...)
	body = append(body, make([]byte, pad8(int64(8+n))-int64(8+n))...)
	return packet(FlagEnd, [numSections]uint32{secI64: 1, secI8: uint32(n)}, body...)
}

func TestCloseAndEOF(t *testing.T) {
	sink := &memSink{}
	w := NewWriter(KindData, sink)
	must(t, w.WriteInt32(1))
	get[int64](t)(w.Finish())
	must(t, WriteClose(sink))
	wantErr(t, WriteClose(nil), ErrUnsupported)
	r := NewReader(KindData, bytes.NewReader(sink.bytes()))
	must(t, r.Next())
	eq(t, r.Next(), ErrClosedByPeer)
	eq(t, r.Next(), ErrClosedByPeer)

	r = NewReader(KindData, bytes.NewReader(nil))
	eq(t, r.Next(), io.EOF)
}

// flakyReader fails its first read, then reads from r.
type flakyReader struct {
	r      io.Reader
	failed bool
}

var errTimeout = errors.New("i/o timeout")

func (f *flakyReader) Read(p []byte) (int, error) {
	if !f.failed {
		f.failed = true
		return 0, errTimeout
	}
	return f.r.Read(p)
}

func TestErrorBeforeHeaderKeepsStream(t *testing.T) {
	sink := &memSink{}
	w := NewWriter(KindData, sink)
	must(t, w.WriteInt32(9))
	get[int64](t)(w.Finish())
	r := NewReader(KindData, &flakyReader{r: bytes.NewReader(sink.bytes())})
	err := r.Next()
	if !errors.Is(err, errTimeout) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v, want the source's error", err)
	}
	must(t, r.Next()) // the stream is intact
	eq(t, get[int32](t)(r.ReadInt32()), 9)
}
