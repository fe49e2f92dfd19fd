package registry

import (
	"bytes"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func sampleMessages() []*message {
	id := Identifier{Pool: "pool", ID: "3", Address: "127.0.0.1:4567", Tag: "worker"}
	return []*message{
		{Kind: kindJoin, ID: 1, Version: ProtocolVersion, Pool: "pool", PoolSize: 4, Address: "a:1", Tag: "t"},
		{Kind: kindReply, ID: 1, Member: &id, PoolSize: 4, Heartbeat: 2e9, MaxFrame: 1 << 20},
		{Kind: kindHeartbeat},
		{Kind: kindElect, ID: 7, Name: "leader"},
		{Kind: kindSignal, ID: 8, Name: "go", Targets: []string{"0", "2"}},
		{Kind: kindSequence, ID: 9, Name: "jobs"},
		{Kind: kindReply, ID: 9, Value: 1 << 40},
		{Kind: kindBind, ID: 10, Name: "server", Port: "rp"},
		{Kind: kindReply, ID: 11, Code: codeAlreadyBound, Error: "taken"},
		{Kind: kindEvent, Event: &Event{Seq: 42, Type: Elected, Member: id, Name: "leader"}},
		{Kind: kindCancel, ID: 12},
		{Kind: kindPing},
		{Kind: kindReply, ID: 13, Value: -5, PoolSize: -1},
		{Kind: kindJoin, ID: 14, Version: ProtocolVersion, Pool: "pool", Rejoin: &id, Epoch: 1 << 60},
		{Kind: kindReply, ID: 14, Member: &id, Heartbeat: 2e9, MaxFrame: 4096, Death: 30e9, Epoch: 99, Flags: flagRestartable},
		{Kind: kindRestore, ID: 15, Members: []Identifier{id, {Pool: "pool", ID: "4"}}, Won: []string{"leader"},
			Bound: []boundName{{"server", "rp"}, {"x", ""}}, Seqs: []sequenceMark{{"jobs", 12}, {"z", -1}}},
		{Kind: kindResume, ID: 16, LastSeq: 42, NextNum: 5, JoinSeq: 3, Flags: flagSawClosed | flagSawTerminated, Member: &id},
		{Kind: kindJoin, ID: 17, Version: ProtocolVersion, Pool: "p", JoinToken: 1<<63 | 9},
		{Kind: kindReply, ID: 17, Code: codeRecovering, Error: "rebuilding"},
	}
}

func TestMessageRoundTrip(t *testing.T) {
	for _, m := range sampleMessages() {
		frame, err := encodeFrame(m)
		if err != nil {
			t.Fatalf("encode %+v: %v", m, err)
		}
		body, err := readFrame(bytes.NewReader(frame), nil, DefaultMaxFrameSize)
		if err != nil {
			t.Fatalf("read frame of %s: %v", m.Kind, err)
		}
		got, err := decodeMessage(body)
		if err != nil {
			t.Fatalf("decode %s: %v", m.Kind, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("round trip changed the message:\n got %+v\nwant %+v", got, m)
		}
	}
}

// rawBody encodes an arbitrary value with msgpack, to build bodies the
// protocol's own encoder would never produce.
func rawBody(t *testing.T, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawMap encodes key/value pairs as a msgpack map in the given order.
func rawMap(t *testing.T, kv ...any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	if err := enc.EncodeMapLen(len(kv) / 2); err != nil {
		t.Fatal(err)
	}
	for _, v := range kv {
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func TestDecodeMessageErrors(t *testing.T) {
	longKey := strings.Repeat("k", maxKeyLength+1)
	cases := []struct {
		name string
		body []byte
		want string
	}{
		{"not a map", rawBody(t, []int{1, 2}), "expected a map"},
		{"no kind", rawBody(t, map[string]any{"i": 1}), "no kind"},
		{"unknown kind", rawBody(t, map[string]any{"k": 200}), "unknown message kind"},
		{"kind too large", rawBody(t, map[string]any{"k": 300}), "exceeds the maximum"},
		{"negative id", rawMap(t, "k", 1, "i", -1), "negative value"},
		{"string for int", rawBody(t, map[string]any{"k": "join"}), "expected an integer"},
		{"int for string", rawMap(t, "k", 1, "p", 5), "expected a string"},
		{"long key", rawBody(t, map[string]any{longKey: 1}), "exceeds the maximum"},
		{"short identifier", rawMap(t, "k", 64, "m", []string{"a"}), "want 4"},
		{"bad event type", rawMap(t, "k", 65, "e", []any{1, 99, []string{"a", "b", "c", "d"}, ""}), "unknown event type"},
		{"local event type", rawMap(t, "k", 65, "e", []any{1, int(RegistryLost), []string{"a", "b", "c", "d"}, ""}), "unknown event type"},
		{"short binding", rawMap(t, "k", 13, "rb", [][]string{{"name"}}), "want 2"},
		{"short sequence mark", rawMap(t, "k", 13, "rq", [][]any{{"name"}}), "want 2"},
		{"sequence mark not a number", rawMap(t, "k", 13, "rq", [][]any{{"name", "x"}}), "expected an integer"},
		{"too many restored members", rawMap(t, "k", 13, "rm", make([][]string, maxRestoreItems+1)), "exceeds the maximum"},
		{"bad restored member", rawMap(t, "k", 13, "rm", [][]string{{"a", "b"}}), "want 4"},
		{"trailing bytes", append(rawBody(t, map[string]any{"k": 3}), 0), "trailing bytes"},
		{"truncated", []byte{0x81, 0xa1, 'k', 0xcd, 0x01}, "ends inside a value"},
		{"string beyond end", rawMap(t, "k", 1, "p", "pool")[:8], "only 1 bytes left"},
		{"huge string claim", []byte{0x82, 0xa1, 'k', 0x01, 0xa1, 'p', 0xdb, 0x7f, 0xff, 0xff, 0xff}, "exceeds the maximum"},
		{"string beyond input", []byte{0x82, 0xa1, 'k', 0x01, 0xa1, 'p', 0xda, 0x10, 0x00, 'x'}, "only 1 bytes left"},
		{"huge array claim", []byte{0x82, 0xa1, 'k', 0x01, 0xa2, 't', 'o', 0xdd, 0x00, 0x01, 0x00, 0x01}, "exceeds the maximum"},
		{"huge map claim", []byte{0xdf, 0xff, 0xff, 0xff, 0xff}, "entries but only"},
		{"deep unknown value", []byte{0x82, 0xa1, 'k', 0x03, 0xa1, 'z', 0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x00}, "nested deeper"},
		{"ext value", []byte{0x82, 0xa1, 'k', 0x03, 0xa1, 'z', 0xd4, 0x01, 0x00}, "unsupported msgpack code"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeMessage(tc.body)
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("got %v, want an error wrapping ErrProtocol", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

func TestDecodeSkipsUnknownFields(t *testing.T) {
	body := rawMap(t,
		"k", uint8(kindElect),
		"future", map[string]any{"a": []any{1, "b", nil, true, 1.5, []byte{1, 2}, -7, uint64(1) << 40}},
		"i", 5,
		"s", "x",
	)
	m, err := decodeMessage(body)
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != kindElect || m.ID != 5 || m.Name != "x" {
		t.Fatalf("decoded %+v", m)
	}
}

// FuzzDecodeMessage checks that message decoding never panics, and that
// whatever it accepts survives an encode/decode round trip unchanged.
func FuzzDecodeMessage(f *testing.F) {
	for _, m := range sampleMessages() {
		frame, err := encodeFrame(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(frame[frameHeaderSize:])
	}
	f.Add([]byte{0xdf, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0x81, 0xa1, 'z', 0x91, 0x91, 0x91, 0x91})
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := decodeMessage(body)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("decode error does not wrap ErrProtocol: %v", err)
			}
			return
		}
		frame, err := encodeFrame(m)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := decodeMessage(frame[frameHeaderSize:])
		if err != nil {
			t.Fatalf("decode of re-encoded message: %v", err)
		}
		if !reflect.DeepEqual(m, again) {
			t.Fatalf("round trip changed the message:\n%+v\n%+v", m, again)
		}
	})
}

// A restore message is decoded with allocations bounded by a small multiple
// of its size, whatever its lists claim: every list is capped at
// maxRestoreItems and checked against the bytes left before anything is
// set aside.
func TestDecodeRestoreAllocatesBoundedly(t *testing.T) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	_ = enc.EncodeMapLen(4)
	_ = enc.EncodeString(keyKind)
	_ = enc.EncodeUint(uint64(kindRestore))
	// The smallest elements there are: empty identifiers, pairs and strings.
	_ = enc.EncodeString(keyMembers)
	_ = enc.EncodeArrayLen(maxRestoreItems)
	for range maxRestoreItems {
		_ = encodeStrings(enc, []string{"", "", "", ""})
	}
	_ = enc.EncodeString(keyBound)
	_ = enc.EncodeArrayLen(maxRestoreItems)
	for range maxRestoreItems {
		_ = encodeStrings(enc, []string{"", ""})
	}
	_ = enc.EncodeString(keyWon)
	_ = enc.EncodeArrayLen(maxRestoreItems)
	for range maxRestoreItems {
		_ = enc.EncodeString("")
	}
	body := buf.Bytes()
	m, err := decodeMessage(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Members) != maxRestoreItems || len(m.Bound) != maxRestoreItems || len(m.Won) != maxRestoreItems {
		t.Fatalf("decoded %d members, %d names, %d elections", len(m.Members), len(m.Bound), len(m.Won))
	}
	var before, after runtime.MemStats
	const runs = 20
	runtime.ReadMemStats(&before)
	for range runs {
		if _, err := decodeMessage(body); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	perByte := float64(after.TotalAlloc-before.TotalAlloc) / runs / float64(len(body))
	if perByte > 24 {
		t.Fatalf("decoding a %d-byte restore message allocates %.1f bytes per byte", len(body), perByte)
	}
	t.Logf("%d-byte restore message: %.1f bytes allocated per byte", len(body), perByte)
}
