package serialization

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// fuzzReaderOpts keep the limits small, so hostile inputs hit them quickly
// and the fuzzer can see that they hold.
var fuzzReaderOpts = []ReaderOption{
	WithReaderMaxPacketSize(4096),
	WithReaderMaxMessageSize(1 << 20),
	WithReaderMaxObjectDepth(64),
}

// seedStreams returns valid streams (the golden files and a few messages)
// for the fuzzers to mutate.
func seedStreams(t testing.TB) [][]byte {
	var seeds [][]byte
	files, _ := filepath.Glob(filepath.Join("testdata", "*.hex"))
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := parseHex(string(text))
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	sink := &memSink{}
	w := NewWriter(KindObject, sink, WithBulkThreshold(32), WithMaxPacketSize(128))
	_ = firstErr(w.WriteArray(fill[int32](40, 1)), w.WriteString("seed"), w.WriteObject([]float64{1, 2}),
		w.WriteObject(map[string]any{"a": []any{1, "b"}}), w.WriteArray([][]int16{{1}, {2, 3}}))
	_, _ = w.Finish()
	return append(seeds, sink.bytes())
}

// readOp performs one read chosen by b. Any error is fine; a panic, a hang
// or an unbounded allocation is not.
func readOp(r *Reader, b byte, n int) error {
	switch b % 16 {
	case 0:
		_, err := r.ReadBool()
		return err
	case 1:
		_, err := r.ReadByte()
		return err
	case 2:
		_, err := r.ReadInt16()
		return err
	case 3:
		_, err := r.ReadInt32()
		return err
	case 4:
		_, err := r.ReadInt64()
		return err
	case 5:
		_, err := r.ReadFloat32()
		return err
	case 6:
		_, err := r.ReadFloat64()
		return err
	case 7:
		_, err := r.ReadString()
		return err
	case 8:
		return r.ReadArray(arrayCases[n%len(arrayCases)].empty(n))
	case 9:
		return r.ReadArray([][]int32{make([]int32, n), make([]int32, n/2)})
	case 10:
		var v any
		return r.ReadObject(&v)
	case 11:
		var v []float64
		return r.ReadObject(&v)
	case 12:
		var v [][]bool
		return r.ReadObject(&v)
	case 13:
		var v point
		return r.ReadObject(&v)
	case 14:
		var v string
		return r.ReadObject(&v)
	}
	return r.Finish()
}

func FuzzReader(f *testing.F) {
	for _, s := range seedStreams(f) {
		f.Add(s, []byte{3, 8, 7, 10, 11, 15})
	}
	f.Add([]byte{}, []byte{})
	// msgpack objects announcing costly elements in few bytes.
	f.Add(msgpackPacket(mpRepeat(1024, 0xc0)), []byte{13, 0, 10, 0})
	f.Add(msgpackPacket(mpRepeat(300, 0x81, 0xa0, 0x80)), []byte{10, 0, 13, 0})
	f.Fuzz(func(t *testing.T, data, ops []byte) {
		r := NewReader(KindObject, bytes.NewReader(data), fuzzReaderOpts...)
		for range 8 {
			err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrClosedByPeer) {
					t.Fatalf("Next: unexpected error %v", err)
				}
				return
			}
			for i := 0; i+1 < len(ops); i += 2 {
				_ = readOp(r, ops[i], int(ops[i+1]))
			}
			if r.Count() > 1<<20 {
				t.Fatalf("a message of %d bytes passed a limit of %d", r.Count(), 1<<20)
			}
		}
	})
}

func FuzzCheckMsgpack(f *testing.F) {
	for _, v := range []any{nil, 1, "s", []any{1, []any{2, map[string]any{"k": 1.5}}}, point{Label: "x", Raw: []byte{1}}} {
		b, err := msgpack.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// Seeds that announce far more than they hold in bytes: rejected by the
	// memory budget for the costlier destinations.
	f.Add(append([]byte{0xdc, 0x10, 0x00}, bytes.Repeat([]byte{0xc0}, 0x1000)...))
	f.Add(append([]byte{0xdc, 0x04, 0x00}, bytes.Repeat([]byte{0x81, 0xa0, 0x80}, 0x400)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := checkMsgpack(data, 64, nil, 0); err != nil {
			return
		}
		// What passes the check must be safe to hand to the decoder, and
		// the estimate must hold.
		for _, ptr := range []any{new(any), new(point), new([]point), new([]bigElem), new(map[string][]int64)} {
			est, err := checkMsgpack(data, 64, costFor(ptr), 1<<20)
			if err != nil {
				if !errors.Is(err, ErrTooLarge) {
					t.Fatalf("%T: the budget check failed with %v", ptr, err)
				}
				continue
			}
			_ = decodeSafely(msgpack.NewDecoder(bytes.NewReader(data)), ptr)
			if est > 1<<20 {
				t.Fatalf("%T: an estimate of %d passed a budget of %d", ptr, est, 1<<20)
			}
		}
	})
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("round trip seed: every kind of value"), byte(0))
	f.Add(bytes.Repeat([]byte{14, 0, 1, 2, 3, 4, 5, 6, 7, 14, 2}, 8), byte(0x5a))
	f.Fuzz(checkRoundTrip)
}

// checkRoundTrip writes the ops generated from data with a configuration
// chosen by cfg, reads them back, and checks that the size plan, the Writer,
// the Sink and the Reader agree on the message size.
func checkRoundTrip(t *testing.T, data []byte, cfg byte) {
	{
		ops := genOps(data)
		opts := []WriterOption{
			WithMaxPacketSize([]int{64, 200, 4096, DefaultMaxPacketSize}[cfg%4]),
			WithBulkThreshold([]int{0, 1, 100, DefaultBulkThreshold}[cfg>>2%4]),
			WithByteOrder(orders[int(cfg>>4)%len(orders)].order),
		}
		sink := &memSink{}
		w := NewWriter(KindObject, sink, opts...)
		for _, op := range ops {
			if err := op.write(w); err != nil {
				t.Fatalf("write %s: %v", op.name, err)
			}
		}
		p := w.plan()
		n, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if n != p.final() || n != int64(sink.all.Len()) {
			t.Fatalf("Finish %d, plan %d, sink %d", n, p.final(), sink.all.Len())
		}
		checkPlan(t, ops, opts)
		r := NewReader(KindObject, bytes.NewReader(sink.bytes()))
		if err := r.Next(); err != nil {
			t.Fatal(err)
		}
		for i, op := range ops {
			if err := op.read(r); err != nil {
				t.Fatalf("op %d: %v", i, err)
			}
		}
		if _, err := r.ReadByte(); !errors.Is(err, ErrShortMessage) && !errors.Is(err, ErrTypeMismatch) {
			t.Fatalf("reading past the message: %v", err)
		}
		if err := r.Finish(); err != nil {
			t.Fatal(err)
		}
		if r.Count() != n {
			t.Fatalf("reader counted %d bytes, writer %d", r.Count(), n)
		}
		if err := r.Next(); err != io.EOF {
			t.Fatalf("after the message: %v", err)
		}
	}
}

// checkPlan verifies the Writer's size projection exactly: replayed under a
// message limit, every write that succeeds keeps the message within the
// limit, and the first write refused with ErrTooLarge is one that (as the
// unlimited run shows) really would have exceeded it, having written
// nothing.
func checkPlan(t *testing.T, ops []op, opts []WriterOption) {
	t.Helper()
	// sizes[k] is the size of the message if finished after ops[:k].
	sizes := []int64{HeaderSize}
	w := NewWriter(KindObject, &discardSink{}, opts...)
	for _, op := range ops {
		if err := op.write(w); err != nil {
			t.Fatal(err)
		}
		p := w.plan()
		sizes = append(sizes, p.final())
	}
	step := max(1, len(ops)/8)
	for k := 1; k <= len(ops); k += step {
		for _, limit := range []int64{sizes[k], max(sizes[k]-1, HeaderSize)} {
			w := NewWriter(KindObject, &discardSink{}, append(opts, WithMaxMessageSize(limit))...)
			for j, op := range ops {
				before := w.plan()
				err := op.write(w)
				after := w.plan()
				if err != nil {
					if !errors.Is(err, ErrTooLarge) || sizes[j+1] <= limit || after != before {
						t.Fatalf("limit %d: op %d (%s) refused (%v), but it takes the message to %d bytes", limit, j, op.name, err, sizes[j+1])
					}
					break
				}
				if f := after.final(); f > limit || f != sizes[j+1] {
					t.Fatalf("limit %d: op %d (%s) made the message %d bytes (unlimited run: %d)", limit, j, op.name, f, sizes[j+1])
				}
			}
		}
	}
}

func TestRoundTripProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 64 {
		data := make([]byte, 50+rng.IntN(400))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkRoundTrip(t, data, byte(i)) })
	}
}

// checkWellFormed runs checkMsgpack without a memory budget.
func checkWellFormed(b []byte, maxDepth int) error {
	_, err := checkMsgpack(b, maxDepth, nil, 0)
	return err
}

func TestCheckMsgpack(t *testing.T) {
	values := []any{nil, true, -1, 300, -70000, uint64(1 << 60), 1.5, float32(2), "", "str",
		[]byte{1, 2}, []any{}, map[string]any{"a": []any{1, "x", nil}}, point{Tags: []string{"t"}, Next: &point{}}}
	for _, v := range values {
		b, err := msgpack.Marshal(v)
		must(t, err)
		if err := checkWellFormed(b, 8); err != nil {
			t.Fatalf("%#v (% x): %v", v, b, err)
		}
		for i := range b { // every truncation is rejected
			if checkWellFormed(b[:i], 8) == nil {
				t.Fatalf("%#v truncated to %d bytes passed", v, i)
			}
		}
	}
	nested := func(depth int) []byte { return append(bytes.Repeat([]byte{0x91}, depth), 0xc0) }
	must(t, checkWellFormed(nested(7), 8)) // 7 containers: 8 levels with the outermost value
	wantErr(t, checkWellFormed(nested(8), 8), ErrTooLarge, "deeper than 8")
	for i, ext := range [][]byte{
		{0xd4, 1, 0}, {0xd8, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
		{0xc7, 2, 5, 0, 0}, {0xc8, 0, 1, 5, 0}, {0xc9, 0, 0, 0, 0, 5}, {0xde, 0, 1, 0xc0, 0xc0},
	} {
		if err := checkWellFormed(ext, 8); err != nil {
			t.Fatalf("case %d (% x): %v", i, ext, err)
		}
	}
	wantErr(t, checkWellFormed([]byte{0xdf, 0, 0, 0, 2, 1, 2, 3}, 8), ErrCorrupt, "announces 4 items")
}
