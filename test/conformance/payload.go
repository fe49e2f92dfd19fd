package conformance

import (
	"fmt"
	"math"
	"reflect"

	"github.com/ibisgo/ibis/ipl"
)

// Record is an object sent through msgpack.
type Record struct {
	Name   string
	Values []float64
	Tags   map[string]int
	Nested *Record
}

// payload is deterministic content derived from a seed, so both ends know it.
type payload struct {
	b     bool
	i8    int8
	i16   int16
	u16   uint16
	i32   int32
	u32   uint32
	i64   int64
	u64   uint64
	f32   float32
	f64   float64
	s     string
	bytes []byte
	f64s  []float64 // large: goes as a byte view
	i32s  []int32
	grid  [][]float64 // ragged 2-D
	rec   Record
}

func makePayload(seed int, large bool) *payload {
	n := 1000
	if large {
		n = 1 << 17 // 1 MiB of float64
	}
	p := &payload{
		b: seed%2 == 0, i8: int8(-seed), i16: int16(-300 - seed), u16: uint16(60000 + seed),
		i32: int32(-1e9 + seed), u32: uint32(4e9) + uint32(seed), i64: -1 << 60, u64: 1<<63 + uint64(seed),
		f32: float32(seed) + 0.25, f64: math.Pi * float64(seed), s: fmt.Sprintf("seed %d: ünïcødé", seed),
		bytes: make([]byte, 3000+seed), f64s: make([]float64, n), i32s: make([]int32, 777),
		grid: [][]float64{{1, 2, 3}, {}, {float64(seed)}, make([]float64, 5000)},
		rec: Record{Name: "r", Values: []float64{1, float64(seed)}, Tags: map[string]int{"a": seed},
			Nested: &Record{Name: "inner"}},
	}
	for i := range p.bytes {
		p.bytes[i] = byte(i*7 + seed)
	}
	for i := range p.f64s {
		p.f64s[i] = float64(i)*0.5 + float64(seed)
	}
	for i := range p.i32s {
		p.i32s[i] = int32(i*i - seed)
	}
	for i := range p.grid[3] {
		p.grid[3][i] = float64(-i)
	}
	return p
}

func writePayload(m ipl.WriteMessage, p *payload) error {
	steps := []func() error{
		func() error { return m.WriteBool(p.b) },
		func() error { return m.WriteInt8(p.i8) },
		func() error { return m.WriteInt16(p.i16) },
		func() error { return m.WriteUint16(p.u16) },
		func() error { return m.WriteInt32(p.i32) },
		func() error { return m.WriteUint32(p.u32) },
		func() error { return m.WriteInt64(p.i64) },
		func() error { return m.WriteUint64(p.u64) },
		func() error { return m.WriteFloat32(p.f32) },
		func() error { return m.WriteFloat64(p.f64) },
		func() error { return m.WriteString(p.s) },
		func() error { return m.WriteArray(p.bytes) },
		func() error { return m.WriteArray(p.f64s) },
		func() error { return m.WriteArray(p.i32s) },
		func() error { return m.WriteArray(p.grid) },
		func() error { return m.WriteObject(p.rec) },
		func() error { return m.WriteObject(p.grid) },
	}
	for i, s := range steps {
		if err := s(); err != nil {
			return fmt.Errorf("write step %d: %w", i, err)
		}
	}
	return nil
}

func readPayload(m ipl.ReadMessage, want *payload) error {
	got := &payload{
		bytes: make([]byte, len(want.bytes)), f64s: make([]float64, len(want.f64s)),
		i32s: make([]int32, len(want.i32s)), grid: make([][]float64, len(want.grid)),
	}
	for i := range want.grid {
		got.grid[i] = make([]float64, len(want.grid[i]))
	}
	var err error
	var grid2 [][]float64
	steps := []func() error{
		func() error { got.b, err = m.ReadBool(); return err },
		func() error { got.i8, err = m.ReadInt8(); return err },
		func() error { got.i16, err = m.ReadInt16(); return err },
		func() error { got.u16, err = m.ReadUint16(); return err },
		func() error { got.i32, err = m.ReadInt32(); return err },
		func() error { got.u32, err = m.ReadUint32(); return err },
		func() error { got.i64, err = m.ReadInt64(); return err },
		func() error { got.u64, err = m.ReadUint64(); return err },
		func() error { got.f32, err = m.ReadFloat32(); return err },
		func() error { got.f64, err = m.ReadFloat64(); return err },
		func() error { got.s, err = m.ReadString(); return err },
		func() error { return m.ReadArray(got.bytes) },
		func() error { return m.ReadArray(got.f64s) },
		func() error { return m.ReadArray(got.i32s) },
		func() error { return m.ReadArray(got.grid) },
		func() error { return m.ReadObject(&got.rec) },
		func() error { return m.ReadObject(&grid2) },
	}
	for i, s := range steps {
		if err := s(); err != nil {
			return fmt.Errorf("read step %d: %w", i, err)
		}
	}
	if !sameGrid(grid2, want.grid) {
		return fmt.Errorf("2-D object differs")
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("payload differs:\n got %+v\nwant %+v", summary(got), summary(want))
	}
	return nil
}

func summary(p *payload) string {
	return fmt.Sprintf("b=%v i8=%d i16=%d u16=%d i32=%d u32=%d i64=%d u64=%d f32=%g f64=%g s=%q len(bytes)=%d len(f64s)=%d rec=%+v",
		p.b, p.i8, p.i16, p.u16, p.i32, p.u32, p.i64, p.u64, p.f32, p.f64, p.s, len(p.bytes), len(p.f64s), p.rec)
}

// sameGrid compares 2-D slices, treating a nil row as equal to an empty one.
func sameGrid(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}
