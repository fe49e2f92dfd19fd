package memexp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"

	"github.com/ibisgo/ibis/serialization"
)

// MaxBytes bounds the size of one slice in an experiment, so that a typo in
// a flag cannot ask for more memory than a benchmark machine has.
const MaxBytes = 1 << 28

// makeData returns n deterministic pseudo-random values. Every byte of the
// integers varies, so a missing or extra byte swap cannot go unnoticed;
// floats are finite, so no NaN payload can be altered in transit by the
// hardware and be mistaken for a conversion error.
func makeData[T serialization.Primitive](n int, seed uint64) []T {
	s := make([]T, n)
	r := rand.New(rand.NewPCG(seed, 0x1b15))
	switch v := any(s).(type) {
	case []byte:
		for i := range v {
			v[i] = byte(r.Uint32())
		}
	case []int16:
		for i := range v {
			v[i] = int16(r.Uint32())
		}
	case []int32:
		for i := range v {
			v[i] = int32(r.Uint32())
		}
	case []int64:
		for i := range v {
			v[i] = int64(r.Uint64())
		}
	case []float32:
		for i := range v {
			v[i] = float32(r.NormFloat64() * 1e4)
		}
	case []float64:
		for i := range v {
			v[i] = r.NormFloat64() * 1e9
		}
	default:
		panic(fmt.Sprintf("memexp: makeData of %T", s)) // unreachable: only the types above are instantiated
	}
	return s
}

// sameBits reports whether a and b hold the same bits.
func sameBits[T serialization.Primitive](a, b []T) bool {
	return len(a) == len(b) && bytes.Equal(serialization.AsBytes(a), serialization.AsBytes(b))
}

// checkSame returns an ErrMismatch error naming the first differing
// element, or nil.
func checkSame[T serialization.Primitive](what string, got, want []T) error {
	if sameBits(got, want) {
		return nil
	}
	if len(got) != len(want) {
		return fmt.Errorf("%w: %s: %d elements, want %d", ErrMismatch, what, len(got), len(want))
	}
	for i := range got {
		if !sameBits(got[i:i+1], want[i:i+1]) {
			return fmt.Errorf("%w: %s: element %d is %v, want %v", ErrMismatch, what, i, got[i], want[i])
		}
	}
	return fmt.Errorf("%w: %s", ErrMismatch, what) // unreachable
}

// refEncoding is the independent reference encoding of s in order, by
// encoding/binary rather than by the code under test.
func refEncoding[T serialization.Primitive](s []T, order binary.ByteOrder) []byte {
	b, err := binary.Append(nil, order, s)
	if err != nil {
		panic(fmt.Sprintf("memexp: reference encoding of %T: %v", s, err)) // unreachable: fixed-size types only
	}
	return b
}

// checkBytes returns an ErrMismatch error naming the first differing byte,
// or nil.
func checkBytes(what string, got, want []byte) error {
	if bytes.Equal(got, want) {
		return nil
	}
	if len(got) != len(want) {
		return fmt.Errorf("%w: %s: %d bytes, want %d", ErrMismatch, what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("%w: %s: byte %d is %#02x, want %#02x", ErrMismatch, what, i, got[i], want[i])
		}
	}
	return nil // unreachable
}

// memSink is the in-memory Sink of the stream cases. By default it only
// counts, like the memory output of the thesis' serialization benchmark:
// the Writer's cost is what is measured, and a bulk slice handed over by
// reference costs nothing more. With keep set it also copies every byte
// into buf, as a transport's kernel would; the checks use that to see the
// message.
type memSink struct {
	keep bool
	buf  []byte
	n    int64
}

// WritePacket counts (and with keep, copies) bufs.
func (s *memSink) WritePacket(bufs net.Buffers) error {
	for _, b := range bufs {
		s.n += int64(len(b))
		if s.keep {
			s.buf = append(s.buf, b...)
		}
	}
	return nil
}

// begin forgets the previous message.
func (s *memSink) begin() {
	s.buf = s.buf[:0]
	s.n = 0
}
