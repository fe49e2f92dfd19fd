package payload

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	_ "github.com/ibisgo/ibis/impl/tcp"
	"github.com/ibisgo/ibis/ipl"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestValidate(t *testing.T) {
	for _, s := range []Spec{
		{Kind: 0, Size: 8}, {Kind: maxKind, Size: 8}, {Kind: Bytes, Size: -1}, {Kind: Bytes, Size: MaxSize + 1},
		{Kind: Int32, Size: 6}, {Kind: Float64, Size: 4}, {Kind: Bytes, Size: 4, Rows: 2},
		{Kind: Bytes2D, Size: 10, Rows: 3}, {Kind: Bytes2D, Size: 10, Rows: 0}, {Kind: Float322D, Size: 8, Rows: 3},
		{Kind: Tree, Size: 0},
	} {
		if err := s.Validate(); !errors.Is(err, ErrSpec) {
			t.Errorf("%+v: %v, want ErrSpec", s, err)
		}
	}
	if _, err := ParseKind("nosuch"); !errors.Is(err, ErrSpec) {
		t.Errorf("ParseKind: %v", err)
	}
	for k := Kind(1); k < maxKind; k++ {
		if got, err := ParseKind(k.String()); err != nil || got != k {
			t.Errorf("ParseKind(%s) = %v, %v", k, got, err)
		}
	}
}

// TestRoundTrip sends every kind through a real Ibis connection (two instances in
// this process, one pool) and checks that it arrives intact, and that Check notices
// a change.
func TestRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pt := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationObject, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO)
	a, err := ipl.New(ctx, ipl.WithPortTypes(pt), ipl.WithPool(fmt.Sprint("payload-", time.Now().UnixNano())))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rp, err := a.CreateReceivePort(ctx, pt, "in")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := a.CreateSendPort(pt, "out")
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Connect(ctx, a.Identifier(), "in"); err != nil {
		t.Fatal(err)
	}
	specs := []Spec{
		{Kind: Bytes, Size: 0}, {Kind: Bytes, Size: 5000}, {Kind: Int32, Size: 64}, {Kind: Int64, Size: 8 << 10},
		{Kind: Float32, Size: 400}, {Kind: Float64, Size: 1 << 16}, {Kind: Objects, Size: 160}, {Kind: Objects, Size: 0},
		{Kind: Tree, Size: 1023 * ItemSize}, {Kind: TreeMsgpack, Size: 7 * ItemSize}, {Kind: ObjectsMsgpack, Size: 160}, {Kind: Bytes2D, Size: 64 * 64, Rows: 64}, {Kind: Float322D, Size: 4 * 1024, Rows: 1},
		{Kind: Float322D, Size: 4 * 32 * 2048, Rows: 32},
	}
	for _, s := range specs {
		out, err := New(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		w, err := sp.NewMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := out.Write(w); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		in, _ := New(s)
		zero(in)
		if s.Size > 0 && !s.Kind.IsObject() && in.Check() == nil {
			t.Fatalf("%s: Check accepted a zeroed payload", s)
		}
		m, err := rp.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := in.Read(m); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
		if err := in.Check(); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// zero clears a payload's primitive contents.
func zero(d *Data) {
	clear(d.b)
	clear(d.i32)
	clear(d.i64)
	clear(d.f32)
	clear(d.f64)
	for _, r := range d.b2 {
		clear(r)
	}
	for _, r := range d.f2 {
		clear(r)
	}
}

// FuzzSpec: a spec read off the network either fails Validate with ErrSpec or
// describes a payload New can build within MaxSize.
func FuzzSpec(f *testing.F) {
	f.Add(uint8(Bytes), int64(100), int64(0))
	f.Add(uint8(Float322D), int64(4096), int64(32))
	f.Add(uint8(Tree), int64(16), int64(0))
	f.Fuzz(func(t *testing.T, kind uint8, size, rows int64) {
		if size < -1 || size > 1<<20 || rows < -1 || rows > 1<<20 {
			return // keep the built payloads small; Validate's bounds are tested above
		}
		s := Spec{Kind: Kind(kind), Size: int(size), Rows: int(rows)}
		if err := s.Validate(); err != nil {
			if !errors.Is(err, ErrSpec) {
				t.Fatalf("%+v: %v is not ErrSpec", s, err)
			}
			return
		}
		d, err := New(s)
		if err != nil {
			t.Fatalf("%+v validated but New failed: %v", s, err)
		}
		if err := d.Check(); err != nil {
			t.Fatal(err)
		}
	})
}
