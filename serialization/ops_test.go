package serialization

import (
	"fmt"
	"math"
	"reflect"
	"strings"
)

// op is one write and the read that mirrors it; read reports a difference
// as an error. Sequences of ops are generated from bytes so that the fuzzer
// and the property tests explore the same space.
type op struct {
	name  string
	write func(w *Writer) error
	read  func(r *Reader) error
}

// byteSrc hands out the bytes of a fuzz input, then zeros.
type byteSrc struct {
	b []byte
	i int
}

func (s *byteSrc) next() byte {
	if s.i >= len(s.b) {
		return 0
	}
	v := s.b[s.i]
	s.i++
	return v
}

func (s *byteSrc) u64() uint64 {
	var v uint64
	for range 8 {
		v = v<<8 | uint64(s.next())
	}
	return v
}

// size picks a slice or string length: often small, sometimes around
// packet and bulk sizes.
func (s *byteSrc) size() int {
	b := s.next()
	switch b % 4 {
	case 0:
		return int(b / 4)
	case 1:
		return (int(s.next())<<8 | int(s.next())) % 600
	case 2:
		return (int(s.next())<<8 | int(s.next())) % 5000
	}
	return 0
}

// genOps turns bytes into a sequence of at most 100 ops.
func genOps(data []byte) []op {
	s := &byteSrc{b: data}
	var ops []op
	for s.i < len(s.b) && len(ops) < 100 {
		ops = append(ops, genOp(s, len(ops)))
	}
	return ops
}

// same checks one read value.
func same[T comparable](what string, got, want T, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if got != want {
		return fmt.Errorf("%s: got %v, want %v", what, got, want)
	}
	return nil
}

func genOp(s *byteSrc, seed int) op {
	x := s.u64()
	switch k := s.next() % 18; k {
	case 0:
		v := x&1 == 1
		return op{"bool", func(w *Writer) error { return w.WriteBool(v) },
			func(r *Reader) error { g, err := r.ReadBool(); return same("bool", g, v, err) }}
	case 1:
		return op{"byte", func(w *Writer) error { return w.WriteByte(byte(x)) },
			func(r *Reader) error { g, err := r.ReadByte(); return same("byte", g, byte(x), err) }}
	case 2:
		return op{"int8", func(w *Writer) error { return w.WriteInt8(int8(x)) },
			func(r *Reader) error { g, err := r.ReadInt8(); return same("int8", g, int8(x), err) }}
	case 3:
		return op{"int16", func(w *Writer) error { return w.WriteInt16(int16(x)) },
			func(r *Reader) error { g, err := r.ReadInt16(); return same("int16", g, int16(x), err) }}
	case 4:
		return op{"uint16", func(w *Writer) error { return w.WriteUint16(uint16(x)) },
			func(r *Reader) error { g, err := r.ReadUint16(); return same("uint16", g, uint16(x), err) }}
	case 5:
		return op{"int32", func(w *Writer) error { return w.WriteInt32(int32(x)) },
			func(r *Reader) error { g, err := r.ReadInt32(); return same("int32", g, int32(x), err) }}
	case 6:
		return op{"uint32", func(w *Writer) error { return w.WriteUint32(uint32(x)) },
			func(r *Reader) error { g, err := r.ReadUint32(); return same("uint32", g, uint32(x), err) }}
	case 7:
		return op{"int64", func(w *Writer) error { return w.WriteInt64(int64(x)) },
			func(r *Reader) error { g, err := r.ReadInt64(); return same("int64", g, int64(x), err) }}
	case 8:
		return op{"uint64", func(w *Writer) error { return w.WriteUint64(x) },
			func(r *Reader) error { g, err := r.ReadUint64(); return same("uint64", g, x, err) }}
	case 9:
		v := int(int32(x)) // fits everywhere
		return op{"int", func(w *Writer) error { return w.WriteInt(v) },
			func(r *Reader) error { g, err := r.ReadInt(); return same("int", g, v, err) }}
	case 10:
		v := uint(uint32(x))
		return op{"uint", func(w *Writer) error { return w.WriteUint(v) },
			func(r *Reader) error { g, err := r.ReadUint(); return same("uint", g, v, err) }}
	case 11:
		return op{"float32", func(w *Writer) error { return w.WriteFloat32(math.Float32frombits(uint32(x))) },
			func(r *Reader) error {
				g, err := r.ReadFloat32()
				return same("float32", math.Float32bits(g), uint32(x), err)
			}}
	case 12:
		return op{"float64", func(w *Writer) error { return w.WriteFloat64(math.Float64frombits(x)) },
			func(r *Reader) error { g, err := r.ReadFloat64(); return same("float64", math.Float64bits(g), x, err) }}
	case 13:
		v := strings.Repeat(string(rune('a'+x%26)), s.size())
		return op{"string", func(w *Writer) error { return w.WriteString(v) },
			func(r *Reader) error { g, err := r.ReadString(); return same("string", g, v, err) }}
	case 14:
		c := arrayCases[x%uint64(len(arrayCases))]
		n := s.size()
		v := c.make(n, seed)
		return op{"[]" + c.name, func(w *Writer) error { return w.WriteArray(v) },
			func(r *Reader) error {
				g := c.empty(n)
				if err := r.ReadArray(g); err != nil {
					return fmt.Errorf("[]%s: %w", c.name, err)
				}
				if !sameBits(g, v) {
					return fmt.Errorf("[]%s of %d differs", c.name, n)
				}
				return nil
			}}
	case 15:
		c := arrayCases[x%uint64(len(arrayCases))]
		rows := int((x >> 8) % 5)
		v := reflect.MakeSlice(reflect.SliceOf(reflect.TypeOf(c.make(0, 0))), rows, rows)
		for i := range rows {
			v.Index(i).Set(reflect.ValueOf(c.make(s.size()/2, seed+i)))
		}
		return op{"[][]" + c.name, func(w *Writer) error { return w.WriteArray(v.Interface()) },
			func(r *Reader) error {
				g := reflect.MakeSlice(v.Type(), rows, rows)
				for i := range rows {
					g.Index(i).Set(reflect.ValueOf(c.empty(v.Index(i).Len())))
				}
				if err := r.ReadArray(g.Interface()); err != nil {
					return fmt.Errorf("[][]%s: %w", c.name, err)
				}
				for i := range rows {
					if !sameBits(g.Index(i).Interface(), v.Index(i).Interface()) {
						return fmt.Errorf("[][]%s row %d differs", c.name, i)
					}
				}
				return nil
			}}
	case 16:
		var v any
		switch x % 4 {
		case 0:
			v = arrayCases[(x>>8)%uint64(len(arrayCases))].make(s.size(), seed)
		case 1:
			v = strings.Repeat("o", s.size())
		case 2:
			v = map[string]any{"n": int64(x), "s": strings.Repeat("m", s.size())}
		}
		return op{"object", func(w *Writer) error { return w.WriteObject(v) },
			func(r *Reader) error {
				var g any
				if err := r.ReadObject(&g); err != nil {
					return fmt.Errorf("object %T: %w", v, err)
				}
				if reflect.TypeOf(g) != reflect.TypeOf(v) {
					return fmt.Errorf("object: got %T, want %T", g, v)
				}
				if v != nil && reflect.TypeOf(v).Kind() == reflect.Slice {
					if !sameBits(g, v) {
						return fmt.Errorf("object %T differs", v)
					}
				} else if !reflect.DeepEqual(g, v) {
					return fmt.Errorf("object %T differs", v)
				}
				return nil
			}}
	}
	return op{"flush", func(w *Writer) error { return w.Flush() }, func(*Reader) error { return nil }}
}
