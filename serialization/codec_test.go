package serialization

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"
	"unsafe"
)

// Types of the object codec's tests.
type (
	cNode struct {
		A, B, C, D  int32
		Left, Right *cNode
	}
	// cNodeRenamed has cNode's shape with one field renamed.
	cNodeRenamed struct {
		A, B, C, E  int32
		Left, Right *cNodeRenamed
	}
	cInner struct {
		Name string
		V    float64
	}
	cEmbed struct{ E int32 }
	cAll   struct {
		B      bool
		I8     int8
		U8     uint8
		I16    int16
		U16    uint16
		I32    int32
		U32    uint32
		I64    int64
		U64    uint64
		I      int
		U      uint
		F32    float32
		F64    float64
		C64    complex64
		C128   complex128
		S      string
		Arr    [3]int16
		BArr   [2]bool
		Strs   []string
		Ints   []int64
		Nil    []int64
		Empty  []int32
		Bytes  []byte
		Grid   [][]float64
		M      map[string]cInner
		NilM   map[int]int
		P      *cInner
		NilP   *cInner
		Inner  cInner
		Inners []cInner
		PArr   [2]*cInner
		cEmbed
		hidden int
	}
	cGraph struct {
		Name  string
		Peers []*cGraph
		Self  *cGraph
		ByKey map[string]*cGraph
	}
	cList struct {
		V    int
		Next *cList
	}
	cKids  struct{ Kids []cKids }
	cIface struct{ V any }
	cFlat  struct{ X, Y, Z float64 }
)

func codecAll() cAll {
	shared := &cInner{"shared", 2}
	return cAll{
		B: true, I8: -8, U8: 8, I16: -16, U16: 16, I32: -32, U32: 32, I64: -64, U64: math.MaxUint64,
		I: -1, U: 1, F32: 1.5, F64: math.Inf(-1), C64: complex(1, -2), C128: complex(math.Pi, 3),
		S: "héllo", Arr: [3]int16{1, -2, 3}, BArr: [2]bool{false, true},
		Strs: []string{"a", "", "c"}, Ints: []int64{1, -2}, Empty: []int32{}, Bytes: []byte("xyz"),
		Grid: [][]float64{{1, 2}, nil, {}}, M: map[string]cInner{"k": {"v", 1}, "": {}},
		P: shared, Inner: cInner{"in", -1}, Inners: []cInner{{"i0", 0}, {"i1", 1}},
		PArr: [2]*cInner{shared, shared}, cEmbed: cEmbed{E: 7}, hidden: 99,
	}
}

// codecTrip writes v as an object and reads it into dst.
func codecTrip(t *testing.T, v, dst any, opts ...ReaderOption) error {
	t.Helper()
	sink := &memSink{}
	w := NewWriter(KindObject, sink)
	must(t, w.WriteObject(v))
	must(t, w.WriteInt32(7))
	get[int64](t)(w.Finish())
	if tag := sink.bytes()[firstByteAt(sink.bytes())]; tag != tagCodec {
		t.Fatalf("%T went out with tag %d, want the codec's", v, tag)
	}
	r := NewReader(KindObject, bytes.NewReader(sink.bytes()), opts...)
	must(t, r.Next())
	err := r.ReadObject(dst)
	eq(t, get[int32](t)(r.ReadInt32()), 7) // still aligned, whatever happened
	must(t, r.Finish())
	return err
}

// firstByteAt returns where the 8-bit section of the first packet in b
// starts: an object's tag, when it is the first thing written.
func firstByteAt(b []byte) int {
	at := HeaderSize
	for i := range secI8 {
		at += secSize[i] * int(binary.NativeEndian.Uint32(b[countsOffset+4*i:]))
	}
	return at
}

func TestCodecEveryKind(t *testing.T) {
	want := codecAll()
	var got cAll
	must(t, codecTrip(t, want, &got))
	want.hidden = 0 // unexported fields do not travel
	eqDeep(t, got, want)
	if got.P != got.PArr[0] || got.PArr[0] != got.PArr[1] {
		t.Fatalf("the shared *cInner arrived as copies")
	}
}

func TestCodecPointersAndValues(t *testing.T) {
	n := &cNode{A: 1, Left: &cNode{B: 2}}
	var byVal cNode
	must(t, codecTrip(t, n, &byVal)) // sent by pointer, read as a value
	eq(t, byVal.Left.B, int32(2))
	var byPtr *cNode
	must(t, codecTrip(t, *n, &byPtr)) // sent by value, read through a pointer
	eq(t, byPtr.Left.B, int32(2))
	var nilPtr = &cNode{}
	sink := &memSink{}
	w := NewWriter(KindObject, sink)
	must(t, w.WriteObject((*cNode)(nil)))
	get[int64](t)(w.Finish())
	r := NewReader(KindObject, bytes.NewReader(sink.bytes()))
	must(t, r.Next())
	must(t, r.ReadObject(&nilPtr))
	if nilPtr != nil {
		t.Fatalf("a nil *cNode arrived as %v", nilPtr)
	}
}

func TestCodecSharingAndCycles(t *testing.T) {
	a := &cGraph{Name: "a"}
	b := &cGraph{Name: "b", Self: a}
	a.Peers = []*cGraph{b, b, nil}
	a.Self = a
	a.ByKey = map[string]*cGraph{"a": a, "b": b}
	var got *cGraph
	must(t, codecTrip(t, a, &got))
	switch {
	case got.Name != "a" || got.Self != got:
		t.Fatalf("the root's cycle to itself is lost: %+v", got)
	case got.Peers[0] != got.Peers[1] || got.Peers[0].Name != "b" || got.Peers[2] != nil:
		t.Fatalf("the shared peer arrived as copies: %+v", got.Peers)
	case got.Peers[0].Self != got || got.ByKey["a"] != got || got.ByKey["b"] != got.Peers[0]:
		t.Fatalf("references back to the root are lost")
	}
}

func TestCodecLongListDoesNotRecurse(t *testing.T) {
	const n = 200_000
	var head *cList
	for i := n - 1; i >= 0; i-- {
		head = &cList{V: i, Next: head}
	}
	var got *cList
	must(t, codecTrip(t, head, &got))
	i := 0
	for l := got; l != nil; l = l.Next {
		if l.V != i {
			t.Fatalf("element %d is %d", i, l.V)
		}
		i++
	}
	eq(t, i, n)
}

func TestCodecTreeAndFlatSlices(t *testing.T) {
	nodes := make([]cNode, 1023)
	for i := range nodes {
		nodes[i] = cNode{A: int32(i), B: -int32(i), C: 3, D: 4}
		if l := 2*i + 1; l < len(nodes) {
			nodes[i].Left = &nodes[l]
		}
		if r := 2*i + 2; r < len(nodes) {
			nodes[i].Right = &nodes[r]
		}
	}
	var got *cNode
	must(t, codecTrip(t, &nodes[0], &got))
	eqDeep(t, got, &nodes[0])
	pts := []cFlat{{1, 2, 3}, {4, 5, 6}}
	var gp []cFlat
	must(t, codecTrip(t, pts, &gp))
	eqDeep(t, gp, pts)
}

func TestCodecMismatch(t *testing.T) {
	var renamed cNodeRenamed
	err := codecTrip(t, cNode{A: 1}, &renamed)
	wantErr(t, err, ErrTypeMismatch, "serialization.cNode", "*serialization.cNodeRenamed", "skipped")
	var n int
	wantErr(t, codecTrip(t, cNode{}, &n), ErrTypeMismatch, "cNode", "*int")
	var list []cNode
	wantErr(t, codecTrip(t, cNode{}, &list), ErrTypeMismatch)
}

func TestCodecIntoInterface(t *testing.T) {
	type local struct{ Q int16 }
	// Registration is for the process: undo it, so that -count=2 starts unregistered.
	t.Cleanup(func() { unregister(reflect.TypeFor[local]()) })
	var v any
	wantErr(t, codecTrip(t, local{3}, &v), ErrTypeMismatch, "serialization.Register", "local")
	must(t, Register(local{}))
	must(t, Register(&local{})) // again, by pointer: the same type
	must(t, codecTrip(t, local{3}, &v))
	eqDeep(t, v, local{3})
	must(t, codecTrip(t, &local{4}, &v))
	eqDeep(t, v, &local{4})
	var s interface{ String() string }
	wantErr(t, codecTrip(t, local{5}, &s), ErrTypeMismatch, "does not implement")

	wantErr(t, Register(nil), ErrUnsupported, "nil")
	wantErr(t, Register(cIface{}), ErrUnsupported, "interface")
	wantErr(t, Register([]string{}), ErrUnsupported, "msgpack")
}

func TestCodecLeavesMsgpackTypesAlone(t *testing.T) {
	// A struct with an interface field, a tagged struct and a slice of
	// strings go to msgpack, which reads them into *any as before.
	for _, v := range []any{cIface{V: "x"}, point{Label: "p"}, []string{"a"}, map[string]int{"n": 1}} {
		sink := &memSink{}
		w := NewWriter(KindObject, sink)
		must(t, w.WriteObject(v))
		get[int64](t)(w.Finish())
		b := sink.bytes()
		if tag := b[firstByteAt(b)]; tag != tagMsgpack {
			t.Fatalf("%T went out with tag %d, want msgpack's", v, tag)
		}
		r := NewReader(KindObject, bytes.NewReader(b))
		must(t, r.Next())
		var got any
		must(t, r.ReadObject(&got))
	}
}

func TestCodecLimits(t *testing.T) {
	in := make([]cInner, 1000)
	var got []cInner
	err := codecTrip(t, in, &got, WithReaderMaxObjectMemory(10<<10))
	wantErr(t, err, ErrTooLarge, "WithReaderMaxObjectMemory", "10240")
	if got != nil {
		t.Fatalf("a rejected object was stored")
	}
	deep := cKids{}
	for range 600 {
		deep = cKids{Kids: []cKids{deep}}
	}
	var gd cKids
	wantErr(t, codecTrip(t, deep, &gd), ErrCorrupt, "nested more than 512", "WithReaderMaxObjectDepth")
	must(t, codecTrip(t, deep, &gd, WithReaderMaxObjectDepth(1000)))
	eqDeep(t, gd, deep)

	self := make([]cKids, 1)
	self[0].Kids = self // a slice that contains itself
	w := NewWriter(KindObject, &memSink{})
	wantErr(t, w.WriteObject(self), ErrTooLarge, "contain itself")
}

// decodeBody runs the decoder over body into a new value of type T.
func decodeBody[T any](body []byte, byPointer bool) (*T, error) {
	pl, err := planFor(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	var d decoder
	d.reset(body, 1<<20, 64)
	v := new(T)
	return v, d.decodeRoot(unsafe.Pointer(v), pl, byPointer)
}

func TestCodecCorruptBodies(t *testing.T) {
	cases := []struct {
		name string
		body []byte
		want string
	}{
		{"truncated", []byte{1, 0, 0, 0}, "needs 16 bytes"},
		{"dangling reference", append(make([]byte, 16), 5, 0), "reference to object 3"},
		{"trailing bytes", append(make([]byte, 16), 0, 0, 9), "left after"},
		{"bad varint", append(make([]byte, 16), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), "varint"},
		{"endless new objects", append(make([]byte, 16), 1, 1), "needs 18 bytes"},
	}
	for _, c := range cases {
		_, err := decodeBody[cNode](c.body, false)
		wantErr(t, err, ErrCorrupt, c.want)
	}
	// Object 0 is a cGraph (the root); a *cInner referring to it would
	// alias two types.
	body := []byte{0, 0, 0, 0}
	_, err := decodeBody[cGraph](body, true)
	must(t, err)
	type mixed struct {
		G *cGraph
		I *cInner
	}
	_, err = decodeBody[mixed]([]byte{1, 2, 0, 0, 0, 0}, false)
	wantErr(t, err, ErrCorrupt, "is a serialization.cGraph, referred to as a serialization.cInner")
	_, err = decodeBody[cAll]([]byte{2}, false)
	wantErr(t, err, ErrCorrupt, "bool byte 2")
	_, err = decodeBody[cInner]([]byte{0x80, 0x80, 0x04}, false)
	wantErr(t, err, ErrCorrupt, "string of 65536 bytes")
	_, err = decodeBody[[]cInner]([]byte{0xff, 0xff, 0x03}, false)
	wantErr(t, err, ErrCorrupt, "does not fit")
	if _, err := parseCodecHeader([]byte{1, 2}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a short header: %v", err)
	}
}

func TestCodecFixedOrder(t *testing.T) {
	// The big-endian path, run on any host: a number's units go out little
	// endian one by one.
	pl := &codecPlan{kind: pkFixed, size: 8, esz: 4, minWire: 8}
	v := [2]uint32{0x01020304, 0x05060708}
	var e encoder
	e.fixed(unsafe.Pointer(&v), pl)
	eqDeep(t, e.buf, []byte{4, 3, 2, 1, 8, 7, 6, 5})
	var got [2]uint32
	d := decoder{b: e.buf}
	must(t, d.fixed(unsafe.Pointer(&got), pl))
	eq(t, got, v)
}

func FuzzCodecDecode(f *testing.F) {
	for _, v := range []any{codecAll(), cNode{A: 1, Left: &cNode{}}, []cInner{{"a", 1}}} {
		sink := &memSink{}
		w := NewWriter(KindObject, sink)
		if err := w.WriteObject(v); err != nil {
			f.Fatal(err)
		}
		if _, err := w.Finish(); err != nil {
			f.Fatal(err)
		}
		f.Add(sink.bytes()[firstByteAt(sink.bytes())+1:])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// Straight into the decoder (the body), and through the header.
		_, _ = decodeBody[cAll](b, false)
		_, _ = decodeBody[cNode](b, true)
		_, _ = decodeBody[cGraph](b, true)
		_, _ = decodeBody[cKids](b, false)
		if h, err := parseCodecHeader(b); err == nil {
			_, _ = decodeBody[[]cInner](h.body, h.byPointer)
		}
	})
}
