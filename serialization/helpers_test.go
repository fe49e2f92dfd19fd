package serialization

import (
	"bytes"
	"encoding/binary"
	"net"
	"reflect"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// memSink records what a Writer hands it: every WritePacket call, with the
// buffers as given (to check aliasing) and a copy of all bytes.
type memSink struct {
	calls [][][]byte // the buffers of each call, as received
	all   bytes.Buffer
	err   error // returned by WritePacket when set
}

func (s *memSink) WritePacket(bufs net.Buffers) error {
	if s.err != nil {
		return s.err
	}
	call := make([][]byte, len(bufs))
	copy(call, bufs)
	s.calls = append(s.calls, call)
	for _, b := range bufs {
		s.all.Write(b)
	}
	return nil
}

func (s *memSink) bytes() []byte { return s.all.Bytes() }

// discardSink counts bytes without keeping them: the sink of benchmarks.
type discardSink struct{ n int64 }

func (s *discardSink) WritePacket(bufs net.Buffers) error {
	for _, b := range bufs {
		s.n += int64(len(b))
	}
	return nil
}

// orders are the byte orders every round trip is run with.
var orders = []struct {
	name  string
	order binary.ByteOrder
}{
	{"native", NativeOrder()},
	{"little", binary.LittleEndian},
	{"big", binary.BigEndian},
}

// roundTrip writes one message with write, reads it back with read, and
// checks that both sides agree on the message size.
func roundTrip(t *testing.T, kind Kind, wopts []WriterOption, write func(w *Writer), read func(r *Reader)) []byte {
	t.Helper()
	sink := &memSink{}
	w := NewWriter(kind, sink, wopts...)
	write(w)
	n, err := w.Finish()
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if n != int64(sink.all.Len()) {
		t.Fatalf("Finish returned %d, sink got %d bytes", n, sink.all.Len())
	}
	if n%8 != 0 {
		t.Fatalf("message size %d is not a multiple of 8", n)
	}
	r := NewReader(kind, bytes.NewReader(sink.bytes()))
	if err := r.Next(); err != nil {
		t.Fatalf("Next: %v", err)
	}
	read(r)
	if err := r.Finish(); err != nil {
		t.Fatalf("reader Finish: %v", err)
	}
	if r.Count() != n {
		t.Fatalf("reader Count %d, writer Finish %d", r.Count(), n)
	}
	return sink.bytes()
}

// must fails the test on an error.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// get fails the test on an error and returns v.
func get[T any](t testing.TB) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// unregister takes t out of Register's registry (tests only: a program never needs to).
func unregister(t reflect.Type) {
	registry.Range(func(k, v any) bool {
		if v.(reflect.Type) == t {
			registry.Delete(k)
		}
		return true
	})
}
