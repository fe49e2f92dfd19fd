package serialization

import (
	"bytes"
	"testing"
)

// TestFrameWalksAStream checks that Frame, applied packet after packet, finds every
// packet boundary and every message end of a stream a Writer produced.
func TestFrameWalksAStream(t *testing.T) {
	var sink bytes.Buffer
	w := NewWriter(KindData, NewStreamSink(&sink))
	big := make([]float64, 5000)
	for i := range 3 {
		w.Reset()
		if err := w.WriteInt32(int32(i)); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteArray(big); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteString("tail"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	b := sink.Bytes()
	ends := 0
	for len(b) > 0 {
		size, flags, ok := Frame(b)
		if !ok {
			t.Fatalf("no packet header at %d bytes from the end", len(b))
		}
		if size < HeaderSize || size > int64(len(b)) {
			t.Fatalf("frame of %d bytes with %d left", size, len(b))
		}
		if flags&FlagEnd != 0 {
			ends++
		}
		b = b[size:]
	}
	if ends != 3 {
		t.Fatalf("found %d message ends, want 3", ends)
	}
}

func TestFrameRejectsGarbage(t *testing.T) {
	if _, _, ok := Frame(make([]byte, HeaderSize)); ok {
		t.Fatal("an all-zero header was taken for a packet")
	}
	if _, _, ok := Frame([]byte{Magic}); ok {
		t.Fatal("a short header was taken for a packet")
	}
}

// FuzzFrame: Frame never panics and never claims a frame shorter than its header.
func FuzzFrame(f *testing.F) {
	f.Add(make([]byte, HeaderSize))
	f.Add(append([]byte{Magic, 0, FlagEnd, 0, 0, 0, 0, 0, 255, 255, 255, 255}, make([]byte, 20)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		size, _, ok := Frame(b)
		if ok && size < HeaderSize {
			t.Fatalf("frame of %d bytes", size)
		}
	})
}
