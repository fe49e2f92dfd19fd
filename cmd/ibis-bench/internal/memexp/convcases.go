package memexp

import (
	"encoding/binary"
	"fmt"

	"github.com/ibisgo/ibis/serialization"
)

// convFuncs are the exported conversions of package serialization for one
// element type.
type convFuncs[T serialization.Primitive] struct {
	putLoop func([]byte, []T, binary.ByteOrder) int
	getLoop func([]T, []byte, binary.ByteOrder) int
	putView func([]byte, []T, binary.ByteOrder) int
	getView func([]T, []byte, binary.ByteOrder) int
}

// typedConversion builds the cases of one element type and a slice of n
// elements, for every method, order and direction of p.
func typedConversion[T serialization.Primitive](e Elem, n int, p ConversionParams, f convFuncs[T]) ([]convBench, error) {
	seed := uint64(e)<<32 | uint64(n)
	src := makeData[T](n, seed)
	nbytes := n * e.Size()
	var out []convBench
	for _, m := range p.Methods {
		for _, o := range p.Orders {
			for _, d := range []Direction{Write, Read} {
				cc := ConversionCase{Elem: e, Bytes: nbytes, Elements: n, Method: m, Order: o, Dir: d}
				name := fmt.Sprintf("%s %s[] %s %s %s", FormatSize(nbytes), e, m, d, o)
				var b *bench
				switch {
				case m == MethodStream && d == Write:
					var err error
					if b, _, err = streamWrite(name, newArrayPayload[T](name, n, false, seed), serialization.KindData, o, p.CopySink); err != nil {
						return nil, err
					}
				case m == MethodStream:
					var err error
					if b, _, err = streamRead(name, newArrayPayload[T](name, n, false, seed), serialization.KindData, o); err != nil {
						return nil, err
					}
				case d == Write:
					put := f.putLoop
					if m == MethodView {
						put = f.putView
					}
					b = convWrite(name, src, o.ByteOrder(), put)
				default:
					get := f.getLoop
					if m == MethodView {
						get = f.getView
					}
					b = convRead(name, src, o.ByteOrder(), get)
				}
				out = append(out, convBench{cc: cc, bench: b})
			}
		}
	}
	return out, nil
}

// convWrite is a bench that encodes src into a byte buffer with put.
func convWrite[T serialization.Primitive](name string, src []T, bo binary.ByteOrder, put func([]byte, []T, binary.ByteOrder) int) *bench {
	ref := refEncoding(src, bo)
	buf := make([]byte, len(ref))
	var cnt int
	return &bench{
		name:  name,
		reset: func() { clear(buf); cnt = 0 },
		run: func(k int) error {
			for range k {
				cnt = put(buf, src, bo)
			}
			return nil
		},
		check: func() error {
			if cnt != len(src) {
				return fmt.Errorf("%w: %d elements converted, want %d", ErrMismatch, cnt, len(src))
			}
			return checkBytes("encoded bytes", buf, ref)
		},
	}
}

// convRead is a bench that decodes the reference encoding of src with get.
func convRead[T serialization.Primitive](name string, src []T, bo binary.ByteOrder, get func([]T, []byte, binary.ByteOrder) int) *bench {
	ref := refEncoding(src, bo)
	dst := make([]T, len(src))
	var cnt int
	return &bench{
		name:  name,
		reset: func() { clear(dst); cnt = 0 },
		run: func(k int) error {
			for range k {
				cnt = get(dst, ref, bo)
			}
			return nil
		},
		check: func() error {
			if cnt != len(src) {
				return fmt.Errorf("%w: %d elements converted, want %d", ErrMismatch, cnt, len(src))
			}
			return checkSame("decoded values", dst, src)
		},
	}
}
