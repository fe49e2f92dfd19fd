package memexp

import (
	"context"
	"errors"
	"testing"

	"github.com/ibisgo/ibis/serialization"
)

func TestSerializationAllCases(t *testing.T) {
	for _, size := range []int{1 << 10, 8 << 10} { // small packets, then bulk packets
		res, err := Serialization(t.Context(), SerializationParams{
			ArrayBytes: size,
			Arrays:     []Elem{ElemByte, ElemInt16, ElemInt32, ElemInt64, ElemFloat32, ElemFloat64},
			TreeNodes:  15,
		}, fast...)
		if err != nil {
			t.Fatal(err)
		}
		if want := 7 * 2 * 2 * 2; len(res.Cases) != want {
			t.Fatalf("%d cases, want %d", len(res.Cases), want)
		}
		for _, c := range res.Cases {
			if c.UserMBps <= 0 || c.TotalMBps < c.UserMBps || c.WireBytes <= c.UserBytes && c.Payload != TreePayload {
				t.Errorf("%s %s %v %v: %+v", c.Payload, c.Serialization, c.Order, c.Dir, c)
			}
		}
		c, ok := res.Find("int32[]", "data", OrderNative, Write)
		if !ok || c.UserBytes != int64(size) || c.Elem != ElemInt32 {
			t.Fatalf("int32[] data write: %+v, %v", c, ok)
		}
		if size >= serialization.DefaultBulkThreshold && c.WireBytes != int64(size)+2*serialization.HeaderSize {
			t.Fatalf("a bulk array message is %d bytes, want the array and two headers", c.WireBytes)
		}
		// The data tree: a reference and four int32 per node, plus a nil
		// reference per missing child (n+1 of them), in one packet.
		c, ok = res.Find(TreePayload, "data", OrderSwapped, Read)
		if want := int64(serialization.HeaderSize + (4*(6*15+1)+7)/8*8); !ok || c.WireBytes != want || c.UserBytes != 15*16 || c.Nodes != 15 {
			t.Fatalf("tree data read: %+v, want %d wire bytes", c, want)
		}
	}
}

func TestSerializationSelection(t *testing.T) {
	res, err := Serialization(t.Context(), SerializationParams{
		ArrayBytes: 256, Arrays: []Elem{ElemFloat64}, NoTree: true,
		Kinds: []serialization.Kind{serialization.KindObject}, Orders: []Order{OrderSwapped}, CopySink: true,
	}, fast...)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cases) != 2 || res.Cases[0].Payload != "float64[]" || res.Cases[1].Dir != Read {
		t.Fatalf("cases %+v", res.Cases)
	}
	p, err := SerializationParams{}.normalize()
	if err != nil || p.ArrayBytes != 100<<10 || p.TreeNodes != 1023 || len(p.Arrays) != 4 || len(p.Kinds) != 2 || len(p.Orders) != 2 {
		t.Fatalf("defaults %+v, %v", p, err)
	}
}

func TestSerializationInvalid(t *testing.T) {
	for _, p := range []SerializationParams{
		{ArrayBytes: -1},
		{ArrayBytes: 4, Arrays: []Elem{ElemInt64}},
		{ArrayBytes: MaxBytes + 8},
		{Arrays: []Elem{Elem(9)}},
		{TreeNodes: -5},
		{TreeNodes: MaxTreeNodes + 1},
		{Kinds: []serialization.Kind{serialization.KindByte}},
		{Orders: []Order{Order(-1)}},
	} {
		if _, err := Serialization(t.Context(), p, fast...); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", p, err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Serialization(ctx, SerializationParams{ArrayBytes: 64}, fast...); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

// brokenPayload writes one value too few.
type brokenPayload struct{ *arrayPayload[int64] }

func (p brokenPayload) write(w *serialization.Writer) error { return w.WriteArray(p.src[1:]) }

// The stream checks have teeth: a payload that does not round-trip fails,
// and a message in the wrong byte order is noticed.
func TestStreamChecksCatchErrors(t *testing.T) {
	if _, _, err := streamRead("broken", brokenPayload{newArrayPayload[int64]("x", 64, false, 1)}, serialization.KindData, OrderNative); !errors.Is(err, ErrMismatch) {
		t.Errorf("broken read: %v, want ErrMismatch", err)
	}
	cfg, err := newConfig(fast)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := streamWrite("broken", brokenPayload{newArrayPayload[int64]("x", 64, false, 1)}, serialization.KindData, OrderNative, false)
	if err == nil {
		_, err = measure(t.Context(), cfg, b)
	}
	if !errors.Is(err, ErrMismatch) {
		t.Errorf("broken write: %v, want ErrMismatch", err)
	}

	p := newArrayPayload[int32]("int32", 8, false, 1)
	msg, err := encodeMessage(p, serialization.KindData, OrderNative)
	if err != nil {
		t.Fatal(err)
	}
	if err := decodeMessage(p, serialization.KindData, msg, OrderSwapped); !errors.Is(err, ErrMismatch) {
		t.Errorf("a native message taken for a swapped one: %v, want ErrMismatch", err)
	}
	if err := decodeMessage(p, serialization.KindData, msg, OrderNative); err != nil {
		t.Errorf("the right order: %v", err)
	}
	msg[len(msg)-1] ^= 1 // the last data byte: one header and 32 bytes of int32, no padding
	if err := decodeMessage(p, serialization.KindData, msg, OrderNative); !errors.Is(err, ErrMismatch) {
		t.Errorf("a flipped bit: %v, want ErrMismatch", err)
	}
	if err := decodeMessage(p, serialization.KindData, msg[:10], OrderNative); !errors.Is(err, ErrMismatch) {
		t.Errorf("a truncated message: %v, want ErrMismatch", err)
	}
}
