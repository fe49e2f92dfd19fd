package hub

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

// Each decoder takes any bytes without panicking, and what it accepts encodes back to
// a payload it decodes to the same message.

func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{framePing, 0, 0})
	f.Add([]byte{frameResult, 0, 3, 0, 0, 0})
	f.Add([]byte{frameRegister, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := readFrame(bytes.NewReader(b))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := writeFrame(&out, fr.typ, fr.payload); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), b[:out.Len()]) {
			t.Fatalf("frame re-encoded as %x, read from %x", out.Bytes(), b)
		}
	})
}

func FuzzDecodeRegister(f *testing.F) {
	f.Add(registerMsg{interval: time.Second, key: "k", advertise: []string{"10.0.0.1:7"}}.encode())
	f.Add([]byte{protocolVersion, 0, 0, 0, 1, 1, 'k', 17})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeRegister(b)
		if err != nil {
			return
		}
		again, err := decodeRegister(m.encode())
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, m)
		}
	})
}

func FuzzDecodeRegistered(f *testing.F) {
	f.Add(registeredMsg{reachable: true, interval: time.Second, observed: "1.2.3.4:5"}.encode())
	f.Add([]byte{2, 0, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeRegistered(b)
		if err != nil {
			return
		}
		again, err := decodeRegistered(m.encode())
		if err != nil || again != m {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, m)
		}
	})
}

func FuzzDecodeRelay(f *testing.F) {
	f.Add(relayMsg{key: "k", targetHub: "h:1"}.encode())
	f.Add([]byte{protocolVersion, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeRelay(b)
		if err != nil {
			return
		}
		again, err := decodeRelay(m.encode())
		if err != nil || again != m {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, m)
		}
	})
}

func FuzzDecodeAccept(f *testing.F) {
	f.Add(acceptMsg{key: "k"}.encode())
	f.Add([]byte{protocolVersion, 1, 'k', 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeAccept(b)
		if err != nil {
			return
		}
		again, err := decodeAccept(m.encode())
		if err != nil || again != m {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, m)
		}
	})
}

func FuzzDecodeResult(f *testing.F) {
	f.Add(resultMsg{code: codeTimeout, message: "late"}.encode())
	f.Add([]byte{codeCount, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeResult(b)
		if err != nil {
			return
		}
		again, err := decodeResult(m.encode())
		if err != nil || again != m {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, m)
		}
	})
}

func FuzzDecodeIncoming(f *testing.F) {
	f.Add(make([]byte, tokenSize))
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		tok, err := decodeIncoming(b)
		if err != nil {
			return
		}
		if !bytes.Equal(tok[:], b) {
			t.Fatalf("token %x from %x", tok, b)
		}
	})
}
