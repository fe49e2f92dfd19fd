package dc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ibisgo/ibis/ipl"
)

// byteMessage is a reader and writer over bytes with the shapes of ipl's data
// serialization (fixed-size integers, length-prefixed strings, msgpack objects), for the
// decoder's fuzz target.
type byteMessage struct{ b []byte }

var errShort = errors.New("short message")

func (m *byteMessage) take(n int) ([]byte, error) {
	if n < 0 || n > len(m.b) {
		return nil, errShort
	}
	v := m.b[:n]
	m.b = m.b[n:]
	return v, nil
}

func (m *byteMessage) ReadByte() (byte, error) {
	v, err := m.take(1)
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

func (m *byteMessage) ReadInt32() (int32, error) {
	v, err := m.take(4)
	if err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(v)), nil
}

func (m *byteMessage) ReadInt64() (int64, error) {
	v, err := m.take(8)
	if err != nil {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

func (m *byteMessage) ReadString() (string, error) {
	n, err := m.ReadInt32()
	if err != nil {
		return "", err
	}
	v, err := m.take(int(n))
	return string(v), err
}

func (m *byteMessage) ReadObject(ptr any) error {
	dec := msgpack.NewDecoder(bytes.NewReader(m.b))
	err := dec.Decode(ptr)
	m.b = nil
	return err
}

func (m *byteMessage) WriteByte(v byte) error { m.b = append(m.b, v); return nil }
func (m *byteMessage) WriteInt32(v int32) error {
	m.b = binary.BigEndian.AppendUint32(m.b, uint32(v))
	return nil
}
func (m *byteMessage) WriteInt64(v int64) error {
	m.b = binary.BigEndian.AppendUint64(m.b, uint64(v))
	return nil
}
func (m *byteMessage) WriteString(v string) error {
	_ = m.WriteInt32(int32(len(v)))
	m.b = append(m.b, v...)
	return nil
}
func (m *byteMessage) WriteObject(v any) error {
	b, err := msgpack.Marshal(v)
	m.b = append(m.b, b...)
	return err
}

var fuzzKind = Define("fuzz.pair", func(_ *Ctx, a [2]int) int { return a[0] + a[1] })

// FuzzReadHeader feeds the decoder of dc's messages (and of a stolen job's argument)
// arbitrary bytes: it must fail with an error, never panic, and never accept what
// breaks the protocol's bounds.
func FuzzReadHeader(f *testing.F) {
	id := ipl.IbisIdentifier{Pool: "p", ID: "3", Address: "127.0.0.1:1", Tag: "site"}
	for _, h := range []header{
		{typ: msgSteal, req: 7, peer: id, flags: flagAsync, hops: 2},
		{typ: msgReply, req: 7, peer: id},
		{typ: msgReply, req: 7, peer: id, job: true, kind: fuzzKind.name, stamp: 9},
		{typ: msgResult, stamp: 9, fail: "boom"},
		{typ: msgDone},
		{typ: msgStats},
		{typ: msgProbe},
	} {
		m := &byteMessage{}
		if err := h.write(m); err != nil {
			f.Fatal(err)
		}
		if h.job {
			_ = m.WriteObject([2]int{1, 2})
		}
		f.Add(m.b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m := &byteMessage{b: data}
		h, err := readHeader(m)
		if err != nil {
			return
		}
		if h.hops < 0 || h.hops > maxHops || len(h.kind) > maxKindName || len(h.fail) > maxFailure {
			t.Fatalf("accepted out of bounds: %+v", h)
		}
		if h.typ == msgReply && h.job {
			if tk, err := receiveJob(m, &h); err == nil && tk.from == nil {
				t.Fatal("a received job without its origin")
			}
		}
	})
}

// TestHeaderRoundTrip writes every message type and reads it back.
func TestHeaderRoundTrip(t *testing.T) {
	id := ipl.IbisIdentifier{Pool: "p", ID: "3", Address: "a", Tag: "s"}
	for _, h := range []header{
		{typ: msgSteal, req: 7, peer: id, flags: flagAsync, hops: 2},
		{typ: msgReply, req: 8, peer: id, job: true, kind: "k", stamp: 9},
		{typ: msgResult, stamp: 9, fail: "boom"},
		{typ: msgDone, fail: ""},
		{typ: msgDone, fail: "context canceled", flags: flagStopped},
		{typ: msgProbe},
	} {
		m := &byteMessage{}
		if err := h.write(m); err != nil {
			t.Fatal(err)
		}
		got, err := readHeader(m)
		if err != nil || got != h {
			t.Errorf("%+v read back as %+v, %v", h, got, err)
		}
	}
	for _, bad := range [][]byte{{0}, {99}, {msgSteal}, append([]byte{msgSteal}, make([]byte, 8)...)} {
		if _, err := readHeader(&byteMessage{b: bad}); err == nil {
			t.Errorf("% x accepted", bad)
		}
	}
}
