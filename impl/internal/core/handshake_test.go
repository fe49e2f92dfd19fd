package core

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/ipl"
)

func TestHandshakeRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	req := &Request{From: ipl.SendPortIdentifier{Name: "s"}, To: "r", PortType: "a,b", Target: "p/1@x"}
	if err := WriteRequest(&buf, req); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRequest(&buf)
	if err != nil || *got != *req {
		t.Fatalf("request round trip: %+v, %v", got, err)
	}
	for code := ReplyAccepted; code <= ReplyNotManyToX; code++ {
		buf.Reset()
		if err := WriteReply(&buf, &Reply{Code: code, Detail: "why"}); err != nil {
			t.Fatal(err)
		}
		rep, err := ReadReply(&buf)
		if err != nil || rep.Code != code {
			t.Fatalf("reply %d: %+v, %v", code, rep, err)
		}
		if (rep.Err() == nil) != (code == ReplyAccepted) {
			t.Errorf("reply %d: Err() = %v", code, rep.Err())
		}
	}
	if err := (&Reply{Code: ReplyTypeMismatch, Detail: "d"}).Err(); !errors.Is(err, ipl.ErrTypeMismatch) {
		t.Errorf("type mismatch reply: %v", err)
	}
}

func TestHandshakeRejectsBadFrames(t *testing.T) {
	huge := append([]byte("IBGO\x01"), 0xff, 0xff, 0xff, 0xff)
	cases := map[string][]byte{
		"garbage":     []byte("GET / HTTP/1.1\r\n\r\n"),
		"version":     append([]byte("IBGO\x09"), 0, 0, 0, 0),
		"huge length": huge,
		"truncated":   append([]byte("IBGO\x01"), 0, 0, 0, 10, 1, 2),
		"not msgpack": append([]byte("IBGO\x01"), 0, 0, 0, 1, 0xc1),
		"empty":       nil,
	}
	for name, b := range cases {
		if _, err := ReadRequest(bytes.NewReader(b)); !errors.Is(err, ErrHandshake) {
			t.Errorf("%s: got %v, want ErrHandshake", name, err)
		}
	}
	_, err := ReadRequest(bytes.NewReader(huge))
	if !strings.Contains(err.Error(), "exceeds") {
		t.Errorf("huge frame error does not say why: %v", err)
	}
}

func FuzzReadRequest(f *testing.F) {
	var buf bytes.Buffer
	_ = WriteRequest(&buf, &Request{To: "r", PortType: "x"})
	f.Add(buf.Bytes())
	f.Add([]byte("IBGO\x01\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := ReadRequest(bytes.NewReader(b))
		if err == nil && (req.To == "" || req.PortType == "") {
			t.Fatalf("accepted an empty request: %+v", req)
		}
		_, _ = ReadReply(bytes.NewReader(b))
	})
}
