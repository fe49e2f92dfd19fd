package serialization

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// A header that announces a large small-packet body costs the reader memory only for
// the bytes that really come: a peer that sends headers and little else cannot make a
// receiver hold 64 KiB per connection.
func TestBodyBufferGrowsWithArrivingBytes(t *testing.T) {
	hdr := make([]byte, HeaderSize)
	hdr[0], hdr[1], hdr[2] = Magic, orderLittle, FlagEnd
	binary.LittleEndian.PutUint32(hdr[countsOffset:], 8000) // 64,000 bytes of int64s
	for _, sent := range []int{0, 100, 5000, 64000} {
		in := append(append([]byte{}, hdr...), make([]byte, sent)...)
		r := NewReader(KindData, bytes.NewReader(in))
		err := r.Next()
		if sent < 64000 {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%d of 64,000 body bytes: %v, want a truncation error", sent, err)
			}
		} else if err != nil {
			t.Fatalf("whole body: %v", err)
		}
		if limit := max(bodyStart, 2*sent); cap(r.buf) > limit {
			t.Errorf("%d body bytes received: the reader holds a %d-byte buffer, want at most %d", sent, cap(r.buf), limit)
		}
	}
}
