package registry

import (
	"bytes"
	"errors"
	"testing"
)

func sampleOps() []*op {
	id := Identifier{Pool: "p", ID: "3", Address: "tcp:10.0.0.1:4000", Tag: "worker"}
	lim := nameLimits{poolNames: 10, poolNameBytes: 1 << 20, memberNameBytes: 4096}
	return []*op{
		{kind: opJoin, front: 1, conn: 2, limits: lim, req: &message{Kind: kindJoin, ID: 7, Version: ProtocolVersion, Pool: "p",
			PoolSize: 4, Address: "tcp:10.0.0.1:4000", Tag: "worker"}},
		{kind: opSignal, front: 1<<63 | 5, conn: 9, limits: lim, req: &message{Kind: kindSignal, ID: 8, Name: "go",
			Targets: []string{"0", "2"}, Member: &id}},
		{kind: opTakeover, front: 3, conn: 4, req: &message{Kind: kindJoin, ID: 1, Pool: "p", Rejoin: &id, Epoch: 99}},
		{kind: opFrontGone, front: 3, gone: 12345, req: &message{Kind: kindLeave}},
		{kind: opDied, front: 3, conn: 4, req: &message{Kind: kindLeave, Member: &id, Flags: flagTell}},
	}
}

// An op reads back as it was written.
func TestOpRoundTrip(t *testing.T) {
	for _, o := range sampleOps() {
		b, err := o.encode()
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeOp(b)
		if err != nil {
			t.Fatalf("%v: %v", o.kind, err)
		}
		again, err := got.encode()
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("%v: read back differently: %v", o.kind, err)
		}
		if got.kind != o.kind || got.front != o.front || got.conn != o.conn || got.gone != o.gone || got.limits != o.limits {
			t.Fatalf("header: got %+v, want %+v", got, o)
		}
	}
}

func TestDecodeOpRefusesBadInput(t *testing.T) {
	good, err := sampleOps()[0].encode()
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string][]byte{
		"empty":        nil,
		"short header": good[:opHeaderSize-1],
		"no body":      good[:opHeaderSize],
		"cut body":     good[:len(good)-2],
		"magic":        append([]byte{'x'}, good[1:]...),
		"version":      append([]byte{opMagic, 9}, good[2:]...),
		"kind 0":       append([]byte{opMagic, opVersion, 0}, good[3:]...),
		"kind limit":   append([]byte{opMagic, opVersion, byte(opLimit)}, good[3:]...),
		"too large":    make([]byte, maxOpSize+1),
	}
	for name, b := range bad {
		if _, err := decodeOp(b); !errors.Is(err, errBadOp) {
			t.Errorf("%s: %v, want errBadOp", name, err)
		}
	}
}

// FuzzDecodeOp: whatever etcd holds under the ops prefix, reading it
// never panics, allocates no more than the input bounds, and what it
// accepts writes back to an op that reads the same.
func FuzzDecodeOp(f *testing.F) {
	for _, o := range sampleOps() {
		b, err := o.encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := decodeOp(b)
		if err != nil {
			if !errors.Is(err, errBadOp) {
				t.Fatalf("error %v does not wrap errBadOp", err)
			}
			return
		}
		if o.kind == 0 || o.kind >= opLimit || o.req == nil {
			t.Fatalf("accepted an op of kind %d with request %v", o.kind, o.req)
		}
		again, err := o.encode()
		if err != nil {
			t.Fatal(err)
		}
		o2, err := decodeOp(again)
		if err != nil || o2.kind != o.kind || o2.front != o.front || o2.limits != o.limits {
			t.Fatalf("re-encoded op reads back as %+v, %v", o2, err)
		}
	})
}
