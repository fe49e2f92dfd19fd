package serialization

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// bigElem is a slice element far larger than the one wire byte (a nil) that
// msgpack needs per element.
type bigElem struct{ A [4096]byte }

// mpArray32 is an array32 header announcing n items.
func mpArray32(n int) []byte {
	b := []byte{0xdd, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(n))
	return b
}

// mpMap32 is a map32 header announcing n entries.
func mpMap32(n int) []byte {
	b := []byte{0xdf, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(n))
	return b
}

// mpRepeat is an array of n copies of the msgpack value item.
func mpRepeat(n int, item ...byte) []byte {
	return append(mpArray32(n), bytes.Repeat(item, n)...)
}

// mpStrKeys is a map of n distinct 4-byte string keys, each with value v.
func mpStrKeys(n int, v ...byte) []byte {
	b := mpMap32(n)
	for i := range n {
		b = append(b, 0xa4, byte(i>>24), byte(i>>16), byte(i>>8), byte(i))
		b = append(b, v...)
	}
	return b
}

func TestMsgpackAllocationIsBounded(t *testing.T) {
	// Tens to hundreds of KiB of msgpack announcing elements that cost far
	// more in the destination than on the wire. Before the budget, the
	// []bigElem case allocated 768 MiB under a 1 MiB message limit.
	const limit = 1 << 20
	for _, tc := range []struct {
		name  string
		mp    []byte
		dst   func() any
		words []string // expected in the error; nil: may pass within the limit
	}{
		{"nils into *any", mpRepeat(64<<10, 0xc0), func() any { return new(any) }, nil},
		{"nils into []point", mpRepeat(64<<10, 0xc0), func() any { return new([]point) },
			[]string{"an array at byte 0 announces 65536 items", "limit of 1048576", "[]serialization.point"}},
		{"nils into []bigElem", mpRepeat(64<<10, 0xc0), func() any { return new([]bigElem) },
			[]string{"an array at byte 0 announces 65536 items", "limit of 1048576"}},
		{"empty maps into []*bigElem", mpRepeat(64<<10, 0x80), func() any { return new([]*bigElem) },
			[]string{"limit of 1048576"}},
		{"small maps into *any", mpRepeat((256<<10)/3, 0x81, 0xa0, 0xc0), func() any { return new(any) },
			[]string{"limit of 1048576"}},
		{"many small maps into *any", mpRepeat(10000, 0x81, 0xa0, 0xc0), func() any { return new(any) },
			[]string{"by byte 5178 it needs about", "limit of 1048576"}},
		{"a wide map into *map[string][256]byte", mpStrKeys(40000, 0xc0), func() any { return new(map[string][256]byte) },
			[]string{"a map at byte 0 announces 40000 entries", "limit of 1048576"}},
		{"pointer in *any", mpRepeat(64<<10, 0xc0), func() any { var v any = new([]bigElem); return &v },
			[]string{"announces 65536 items"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			follow := packet(FlagEnd, [numSections]uint32{secI32: 1}, le(int32(42), int32(0))...)
			msg := append(msgpackPacket(tc.mp), follow...)
			r := NewReader(KindObject, bytes.NewReader(msg), WithReaderMaxMessageSize(limit))
			must(t, r.Next())
			var err error
			alloc := allocatedBy(func() { err = r.ReadObject(tc.dst()) })
			t.Logf("%d msgpack bytes, allocated %d KiB: %v", len(tc.mp), alloc>>10, err)
			if alloc > 2*limit {
				t.Fatalf("reading a %d-byte object under a limit of %d allocated %d bytes", len(tc.mp), limit, alloc)
			}
			if tc.words != nil || err != nil {
				wantErr(t, err, ErrTooLarge, tc.words...)
			}
			// The object was consumed: the stream goes on.
			must(t, r.Finish())
			must(t, r.Next())
			eq(t, get[int32](t)(r.ReadInt32()), 42)
		})
	}
}

func TestReaderMaxObjectMemory(t *testing.T) {
	pts := make([]point, 1000)
	for i := range pts {
		pts[i] = point{X: float64(i), Label: "p", Tags: []string{"a"}}
	}
	sink := &memSink{}
	w := NewWriter(KindObject, sink)
	must(t, w.WriteObject(pts))
	must(t, w.WriteInt32(7))
	get[int64](t)(w.Finish())
	read := func(opts ...ReaderOption) error {
		r := NewReader(KindObject, bytes.NewReader(sink.bytes()), opts...)
		must(t, r.Next())
		var got []point
		err := r.ReadObject(&got)
		if err == nil {
			eqDeep(t, got, pts)
		}
		eq(t, get[int32](t)(r.ReadInt32()), 7) // read on after a rejected object
		must(t, r.Finish())
		return err
	}
	must(t, read()) // the default: the message limit, 1 GiB
	must(t, read(WithReaderMaxObjectMemory(-1)))
	err := read(WithReaderMaxObjectMemory(100 << 10))
	wantErr(t, err, ErrTooLarge, "limit of 102400", "WithReaderMaxObjectMemory", "announces 1000 items")
	if errors.Is(err, ErrCorrupt) {
		t.Fatalf("an object over the memory limit is not corrupt: %v", err)
	}
	// The object limit follows the message limit unless set apart.
	wantErr(t, read(WithReaderMaxMessageSize(100<<10)), ErrTooLarge, "limit of 102400")
	must(t, read(WithReaderMaxMessageSize(100<<10), WithReaderMaxObjectMemory(10<<20)))
}

// TestMsgpackEstimateCoversAllocation decodes hostile and ordinary msgpack
// into many destination types and checks that the estimate the budget is
// charged with is at least what the decoder really allocates.
func TestMsgpackEstimateCoversAllocation(t *testing.T) {
	const n = 3000
	ts := []byte{0xd6, 0xff, 0, 0, 0, 1}
	inputs := []struct {
		name string
		mp   []byte
	}{
		{"nils", mpRepeat(n, 0xc0)},
		{"fixints", mpRepeat(n, 0x01)},
		{"int16s", mpRepeat(n, 0xd1, 0x7f, 0x7f)},
		{"float32s", mpRepeat(n, 0xca, 0x7f, 0x7f, 1, 1)},
		{"empty arrays", mpRepeat(n, 0x90)},
		{"arrays of a nil", mpRepeat(n, 0x91, 0xc0)},
		{"empty maps", mpRepeat(n, 0x80)},
		{"maps {'': nil}", mpRepeat(n, 0x81, 0xa0, 0xc0)},
		{"maps {'A': []}", mpRepeat(n, 0x81, 0xa1, 'A', 0x90)},
		{"empty strings", mpRepeat(n, 0xa0)},
		{"1-byte strings", mpRepeat(n, 0xa1, 'x')},
		{"17-byte strings", mpRepeat(n, append([]byte{0xb1}, bytes.Repeat([]byte{'y'}, 17)...)...)},
		{"empty bins", mpRepeat(n, 0xc4, 0)},
		{"3-byte bins", mpRepeat(n, 0xc4, 3, 1, 2, 3)},
		{"timestamps", mpRepeat(n, ts...)},
		{"a wide map of nils", mpStrKeys(n, 0xc0)},
		{"a wide map of ints", mpStrKeys(n, 0xd1, 1, 2)},
		{"a wide map of empty maps", mpStrKeys(n, 0x80)},
		{"a wide map of empty arrays", mpStrKeys(n, 0x90)},
		{"nested arrays", mpRepeat(n/10, append([]byte{0x9a}, bytes.Repeat([]byte{0x91, 0xc0}, 10)...)...)},
		{"maps with long keys", mpRepeat(n/4, append(append([]byte{0x82, 0xd9, 200}, bytes.Repeat([]byte{'k'}, 200)...), 0x01, 0xa4, 'L', 'e', 'f', 't', 0x80)...)},
		{"a tree", mustMarshal(t, tree(12))},
		{"a nil", []byte{0xc0}},
		{"a point", mustMarshal(t, point{X: 1, Tags: []string{"a", "b"}, Next: &point{Raw: []byte{1}}})},
	}
	type pair struct {
		A []any
		M map[string]any
	}
	type withPtr struct{ P *[2048]byte }
	type embedded struct {
		*point
		Q **bigElem
	}
	dsts := []struct {
		name string
		new  func() any
	}{
		{"*any", func() any { return new(any) }},
		{"*[]any", func() any { return new([]any) }},
		{"*map[string]any", func() any { return new(map[string]any) }},
		{"*[]point", func() any { return new([]point) }},
		{"*[]bigElem", func() any { return new([]bigElem) }},
		{"*[]*bigElem", func() any { return new([]*bigElem) }},
		{"*[][2048]byte", func() any { return new([][2048]byte) }},
		{"*[]withPtr", func() any { return new([]withPtr) }},
		{"*[]embedded", func() any { return new([]embedded) }},
		{"*[][]int", func() any { return new([][]int) }},
		{"*[]map[string]int", func() any { return new([]map[string]int) }},
		{"*map[string]int64", func() any { return new(map[string]int64) }},
		{"*map[string][256]byte", func() any { return new(map[string][256]byte) }},
		{"*map[string]*[256]byte", func() any { return new(map[string]*[256]byte) }},
		{"*map[string][]any", func() any { return new(map[string][]any) }},
		{"*[]string", func() any { return new([]string) }},
		{"*[][]byte", func() any { return new([][]byte) }},
		{"*[]pair", func() any { return new([]pair) }},
		{"*[]**point", func() any { return new([]**point) }},
		{"*[]time.Time", func() any { return new([]time.Time) }},
		{"*point", func() any { return new(point) }},
		{"*treeNode", func() any { return new(treeNode) }},
		{"*[]treeNode", func() any { return new([]treeNode) }},
		{"*bigElem", func() any { return new(bigElem) }},
		{"*any holding *[]bigElem", func() any { var v any = new([]bigElem); return &v }},
	}
	const slack = 4 << 10 // the decoder's own small allocations
	worst := 0.0
	for _, in := range inputs {
		for _, d := range dsts {
			ptr := d.new()
			est, err := checkMsgpack(in.mp, DefaultMaxObjectDepth, costFor(ptr), math.MaxInt64)
			must(t, err)
			// TotalAlloc counts every goroutine of the process, the
			// runtime's included; the decoder's own allocation is the same
			// each time, so an excess is measured again and the least of
			// three readings is taken.
			var derr error
			alloc := uint64(math.MaxUint64)
			for try := 0; try < 3; try++ {
				ptr = d.new()
				dec := msgpack.NewDecoder(bytes.NewReader(in.mp))
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				derr = decodeSafely(dec, ptr)
				runtime.ReadMemStats(&after)
				alloc = min(alloc, after.TotalAlloc-before.TotalAlloc)
				if alloc <= uint64(est+slack) {
					break
				}
			}
			if testing.Verbose() {
				t.Logf("%-28s %-26s est %9d alloc %9d  over %.1fx ok=%v", in.name, d.name, est, alloc, float64(est)/float64(max(alloc, 1)), derr == nil)
			}
			if int64(alloc) > est+slack {
				t.Errorf("%s into %s: estimated %d bytes, the decoder allocated %d (decode error: %v)", in.name, d.name, est, alloc, derr)
			}
			if alloc > 64<<10 {
				worst = max(worst, float64(alloc)/float64(est))
			}
		}
	}
	t.Logf("largest allocation/estimate ratio: %.2f", worst)
}

// treeNode is a binary tree node without strings: map keys naming its
// fields are not copied.
type treeNode struct {
	A, B, C, D  int32
	Left, Right *treeNode
}

// tree returns a complete tree of the given depth.
func tree(depth int) *treeNode {
	if depth == 0 {
		return nil
	}
	return &treeNode{A: int32(depth), Left: tree(depth - 1), Right: tree(depth - 1)}
}

// TestMsgpackEstimateLargeStringSlice covers msgpack's capped pre-allocation
// of []string, which then grows by appending.
func TestMsgpackEstimateLargeStringSlice(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 1.2 million strings")
	}
	mp := mpRepeat(1200000, 0xa0)
	var v []string
	est, err := checkMsgpack(mp, DefaultMaxObjectDepth, costFor(&v), math.MaxInt64)
	must(t, err)
	alloc := allocatedBy(func() { must(t, msgpack.NewDecoder(bytes.NewReader(mp)).Decode(&v)) })
	if int64(alloc) > est {
		t.Fatalf("estimated %d bytes, allocated %d", est, alloc)
	}
}

// TestMsgpackEstimateLargeStrings covers msgpack's read buffer, which
// grows by appending 1 MiB at a time for a long string or struct key.
func TestMsgpackEstimateLargeStrings(t *testing.T) {
	type keyed struct{ X int }
	for _, n := range []int{100, 1 << 20, 3<<20 + 5} {
		str := append([]byte{0xdb, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, make([]byte, n)...)
		for _, tc := range []struct {
			name string
			mp   []byte
			ptr  any
		}{
			{"string", str, new(string)},
			{"any", str, new(any)},
			{"[]byte", str, new([]byte)},
			{"a struct key", append(append([]byte{0x81}, str...), 0x01), new(keyed)},
		} {
			est, err := checkMsgpack(tc.mp, DefaultMaxObjectDepth, costFor(tc.ptr), math.MaxInt64)
			must(t, err)
			alloc := leastAllocatedBy(func() {
				ptr := reflect.New(reflect.TypeOf(tc.ptr).Elem()).Interface()
				_ = msgpack.NewDecoder(bytes.NewReader(tc.mp)).Decode(ptr)
			})
			if int64(alloc) > est+4<<10 {
				t.Errorf("%d bytes into %s: estimated %d bytes, allocated %d", n, tc.name, est, alloc)
			}
		}
	}
}

func TestMsgpackCostIsCached(t *testing.T) {
	var v []point
	if costFor(&v) != costOf(reflect.TypeFor[[]point]()) {
		t.Fatal("the cost of a destination type is computed again")
	}
	mp := mustMarshal(t, []point{{X: 1}, {Label: "x"}})
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := checkMsgpack(mp, DefaultMaxObjectDepth, costFor(&v), 1<<20); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("checking an object with its budget allocates %.0f times", allocs)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	must(t, err)
	return b
}
