package core

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParseCutNotice: whatever a receiver writes after the handshake, the sender's
// decoding ends in an error, never a panic; only a well-formed notice is a
// *ReceiverCut, and it carries the number that was encoded.
func FuzzParseCutNotice(f *testing.F) {
	f.Add(cutNotice(0))
	f.Add(cutNotice(6001))
	f.Add([]byte{cutNoticeMark, 1, 2})
	f.Add([]byte("GET / HTTP/1.1\r\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		err := ParseCutNotice(b)
		if err == nil {
			t.Fatalf("%x: decoded without an error", b)
		}
		var rc *ReceiverCut
		whole := len(b) >= CutNoticeSize && b[0] == cutNoticeMark
		if errors.As(err, &rc) != whole {
			t.Fatalf("%x: %v (a whole notice: %v)", b, err, whole)
		}
		if whole && !bytes.Equal(cutNotice(rc.Taken), b[:CutNoticeSize]) {
			t.Fatalf("%x: decoded as %d taken", b, rc.Taken)
		}
	})
}
