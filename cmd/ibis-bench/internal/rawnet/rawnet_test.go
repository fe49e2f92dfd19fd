package rawnet

import (
	"bytes"
	"errors"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEchoAckAndSend(t *testing.T) {
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := Dial(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	payload := bytes.Repeat([]byte("ibis"), 5000)
	got, err := c.RoundTrip(payload, len(payload))
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("echo: %v, %d bytes", err, len(got))
	}
	for range 5 { // frames without reply, then one acknowledged
		if err := c.Send(payload, NoReply); err != nil {
			t.Fatal(err)
		}
	}
	got, err = c.RoundTrip(nil, 32)
	if err != nil || len(got) != 32 {
		t.Fatalf("ack: %v, %d bytes", err, len(got))
	}
	got, err = c.RoundTrip(nil, 0)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty: %v, %d bytes", err, len(got))
	}
}

// TestOversizedFrame: a header claiming more than MaxFrame ends the connection
// instead of allocating.
func TestOversizedFrame(t *testing.T) {
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := Dial(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var h [HeaderSize]byte
	header(&h, MaxFrame+1, 0)
	if _, err := c.c.Write(h[:]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Receive(); err == nil {
		t.Fatal("server answered an oversized frame")
	}
	if _, _, err := parseHeader(h[:]); !errors.Is(err, ErrFrame) {
		t.Fatalf("parseHeader: %v", err)
	}
}

// FuzzParseHeader: any 8 bytes either parse within the limits or fail with ErrFrame.
func FuzzParseHeader(f *testing.F) {
	var h [HeaderSize]byte
	header(&h, 100, NoReply)
	f.Add(h[:])
	header(&h, MaxFrame, MaxFrame)
	f.Add(h[:])
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < HeaderSize {
			return
		}
		n, reply, err := parseHeader(b[:HeaderSize])
		if err != nil {
			if !errors.Is(err, ErrFrame) {
				t.Fatalf("error %v is not ErrFrame", err)
			}
			return
		}
		if n < 0 || n > MaxFrame || (reply != NoReply && reply > MaxFrame) {
			t.Fatalf("accepted n=%d reply=%d", n, reply)
		}
	})
}
