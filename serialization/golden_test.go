package serialization

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenPoint travels by the object codec, goldenTagged by msgpack.
type goldenPoint struct {
	Name string
	X, Y int32
	Next *goldenPoint
}

type goldenTagged struct {
	Name string `msgpack:"n"`
	X    int32
}

// goldenCases are messages whose exact bytes are pinned in testdata/: any
// change to the wire format shows up as a diff there.
var goldenCases = []struct {
	name  string
	kind  Kind
	opts  []WriterOption
	write func(w *Writer) error
	read  func(r *Reader) error
}{
	{"empty", KindData, nil, func(w *Writer) error { return nil }, func(r *Reader) error { return nil }},
	{"primitives", KindData, nil, func(w *Writer) error {
		return firstErr(w.WriteBool(true), w.WriteByte(0xAB), w.WriteInt8(-2), w.WriteInt16(-300),
			w.WriteUint16(0xBEEF), w.WriteInt32(-70000), w.WriteUint32(0xDEADBEEF), w.WriteInt64(-1<<40),
			w.WriteUint64(0x0123456789ABCDEF), w.WriteInt(-5), w.WriteUint(5), w.WriteFloat32(1.5),
			w.WriteFloat64(-0.125), w.WriteString("ibis"), w.WriteInt8(3))
	}, func(r *Reader) error {
		return expect(r.ReadBool, true, r.ReadByte, byte(0xAB), r.ReadInt8, int8(-2), r.ReadInt16, int16(-300),
			r.ReadUint16, uint16(0xBEEF), r.ReadInt32, int32(-70000), r.ReadUint32, uint32(0xDEADBEEF),
			r.ReadInt64, int64(-1<<40), r.ReadUint64, uint64(0x0123456789ABCDEF), r.ReadInt, -5, r.ReadUint, uint(5),
			r.ReadFloat32, float32(1.5), r.ReadFloat64, -0.125, r.ReadString, "ibis", r.ReadInt8, int8(3))
	}},
	{"arrays", KindData, []WriterOption{WithBulkThreshold(24), WithMaxPacketSize(64)}, func(w *Writer) error {
		return firstErr(w.WriteArray([]int16{1, -2, 3}), w.WriteArray([]int32{10, 20}),
			w.WriteArray([]float64{0.5, 1, 2, 4}), // bulk: 32 bytes
			w.WriteArray([]bool{true, false, true}),
			w.WriteArray([][]uint16{{7}, {}, {8, 9}}),
			w.WriteArray([]int64{1, 2, 3, 4, 5, 6, 7, 8, 9}), // bulk again
			w.WriteArray([]byte("0123456789abcdefghijklmnopqrstuvwxyz")))
	}, func(r *Reader) error {
		i16, i32, f64, bl := make([]int16, 3), make([]int32, 2), make([]float64, 4), make([]bool, 3)
		u2 := [][]uint16{make([]uint16, 1), {}, make([]uint16, 2)}
		i64, by := make([]int64, 9), make([]byte, 36)
		err := firstErr(r.ReadArray(i16), r.ReadArray(i32), r.ReadArray(f64), r.ReadArray(bl), r.ReadArray(u2),
			r.ReadArray(i64), r.ReadArray(by))
		got := fmt.Sprint(i16, i32, f64, bl, u2, i64, string(by))
		if want := "[1 -2 3] [10 20] [0.5 1 2 4] [true false true] [[7] [] [8 9]] [1 2 3 4 5 6 7 8 9]0123456789abcdefghijklmnopqrstuvwxyz"; err == nil && got != want {
			err = fmt.Errorf("got %s, want %s", got, want)
		}
		return err
	}},
	{"objects", KindObject, nil, func(w *Writer) error {
		return firstErr(w.WriteObject(nil), w.WriteObject("s"), w.WriteObject(int16(-9)),
			w.WriteObject([]int32{1, 2}), w.WriteObject([]float64(nil)), w.WriteObject([][]uint8{{1}, nil}),
			w.WriteObject(goldenPoint{"p", 3, -4, &goldenPoint{Name: "q"}}), w.WriteObject(goldenTagged{"t", 5}))
	}, func(r *Reader) error {
		var n any = 1
		var s string
		var i int16
		var a []int32
		f := []float64{1}
		var b [][]uint8
		var p goldenPoint
		var g goldenTagged
		err := firstErr(r.ReadObject(&n), r.ReadObject(&s), r.ReadObject(&i), r.ReadObject(&a), r.ReadObject(&f),
			r.ReadObject(&b), r.ReadObject(&p), r.ReadObject(&g))
		if err == nil && p.Next == nil {
			return fmt.Errorf("goldenPoint.Next lost")
		}
		got := fmt.Sprintf("%v %v %v %v %v %v %v %v %v %v %v %+v", n, s, i, a, f == nil, b, b[1] == nil,
			p.Name, p.X, p.Y, *p.Next, g)
		if want := "<nil> s -9 [1 2] true [[1] []] true p 3 -4 {q 0 0 <nil>} {Name:t X:5}"; err == nil && got != want {
			err = fmt.Errorf("got %s, want %s", got, want)
		}
		return err
	}},
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// expect calls pairs of (read function, wanted value).
func expect(pairs ...any) error {
	for i := 0; i < len(pairs); i += 2 {
		var got any
		var err error
		switch f := pairs[i].(type) {
		case func() (bool, error):
			got, err = f()
		case func() (byte, error):
			got, err = f()
		case func() (int8, error):
			got, err = f()
		case func() (int16, error):
			got, err = f()
		case func() (uint16, error):
			got, err = f()
		case func() (int32, error):
			got, err = f()
		case func() (uint32, error):
			got, err = f()
		case func() (int64, error):
			got, err = f()
		case func() (uint64, error):
			got, err = f()
		case func() (int, error):
			got, err = f()
		case func() (uint, error):
			got, err = f()
		case func() (float32, error):
			got, err = f()
		case func() (float64, error):
			got, err = f()
		case func() (string, error):
			got, err = f()
		default:
			return fmt.Errorf("expect: unsupported %T", f)
		}
		if err != nil {
			return err
		}
		if got != pairs[i+1] {
			return fmt.Errorf("value %d: got %v, want %v", i/2, got, pairs[i+1])
		}
	}
	return nil
}

// hexDump formats bytes as 16 per line, for reviewable golden files.
func hexDump(b []byte) string {
	var sb strings.Builder
	sb.WriteString("# serialization golden file: regenerate with go test -run TestGolden -update\n")
	for i := 0; i < len(b); i += 16 {
		line := b[i:min(i+16, len(b))]
		for j, c := range line {
			if j > 0 {
				sb.WriteByte(' ')
			}
			fmt.Fprintf(&sb, "%02x", c)
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// parseHex reads a hexDump, ignoring comments and whitespace.
func parseHex(s string) ([]byte, error) {
	var sb strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		sb.WriteString(strings.Join(strings.Fields(line), ""))
	}
	return hex.DecodeString(sb.String())
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		for _, o := range []struct {
			name  string
			order binary.ByteOrder
		}{{"le", binary.LittleEndian}, {"be", binary.BigEndian}} {
			name := tc.name + "_" + o.name
			t.Run(name, func(t *testing.T) {
				sink := &memSink{}
				w := NewWriter(tc.kind, sink, append(tc.opts, WithByteOrder(o.order))...)
				must(t, tc.write(w))
				get[int64](t)(w.Finish())
				path := filepath.Join("testdata", name+".hex")
				if *update {
					must(t, os.WriteFile(path, []byte(hexDump(sink.bytes())), 0o644))
				}
				text, err := os.ReadFile(path)
				must(t, err)
				want, err := parseHex(string(text))
				must(t, err)
				if !bytes.Equal(sink.bytes(), want) {
					t.Fatalf("wire bytes differ from %s:\ngot:\n%swant:\n%s", path, hexDump(sink.bytes()), hexDump(want))
				}
				// The stored bytes decode to the written values.
				r := NewReader(tc.kind, bytes.NewReader(want))
				must(t, r.Next())
				must(t, tc.read(r))
				must(t, r.Finish())
				eq(t, r.Count(), int64(len(want)))
			})
		}
	}
	t.Run("close", func(t *testing.T) {
		sink := &memSink{}
		must(t, WriteClose(sink))
		path := filepath.Join("testdata", "close.hex")
		if *update {
			must(t, os.WriteFile(path, []byte(hexDump(sink.bytes())), 0o644))
		}
		text, err := os.ReadFile(path)
		must(t, err)
		want, err := parseHex(string(text))
		must(t, err)
		// The close packet is in the native order; compare its order-free part.
		got := sink.bytes()
		if len(got) != HeaderSize || got[0] != Magic || got[2] != FlagClose || !bytes.Equal(got[3:], want[3:]) {
			t.Fatalf("close packet % x, golden % x", got, want)
		}
	})
}
