package nio

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ibisgo/ibis/impl/tcp"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

var interopType = ipl.MustPortType(ipl.ConnectionOneToMany, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO)

// TestInteropWithTCP: the wire format is impl/tcp's, so a tcp send port feeds an nio
// receive port of every flavour and an nio send port of every flavour feeds a tcp
// receive port, in one pool.
func TestInteropWithTCP(t *testing.T) {
	srv, err := registry.StartEmbedded("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	open := func(impl string, props ...string) ipl.Ibis {
		opts := []ipl.Option{ipl.WithImplementation(impl), ipl.WithPortTypes(interopType),
			ipl.WithRegistry(srv.Addr()), ipl.WithPool("interop")}
		for i := 0; i+1 < len(props); i += 2 {
			opts = append(opts, ipl.WithProperty(props[i], props[i+1]))
		}
		ib, err := ipl.New(ctx, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return ib
	}
	tib := open(tcp.Name)
	defer tib.Close()
	for _, f := range []string{"blocking", "nonblocking", "thread"} {
		nib := open(Name, PropertySend, f, PropertyReceive, f)
		exchange(ctx, t, "tcp to nio "+f, tib, nib)
		exchange(ctx, t, "nio "+f+" to tcp", nib, tib)
		if err := nib.Close(); err != nil {
			t.Errorf("closing nio %s: %v", f, err)
		}
	}
}

// exchange sends a few messages, one of them large, from a port of src to a new port
// of dst and checks them.
func exchange(ctx context.Context, t *testing.T, what string, src, dst ipl.Ibis) {
	t.Helper()
	name := fmt.Sprintf("in-%d", time.Now().UnixNano())
	rp, err := dst.CreateReceivePort(ctx, interopType, name)
	if err != nil {
		t.Fatal(err)
	}
	defer rp.Close()
	sp, err := src.CreateSendPort(interopType, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if err := sp.Connect(ctx, dst.Identifier(), name); err != nil {
		t.Fatalf("%s: connect: %v", what, err)
	}
	big := make([]float64, 100000)
	for i := range big {
		big[i] = float64(i)
	}
	go func() {
		for i := range 3 {
			m, err := sp.NewMessage(ctx)
			if err != nil {
				return
			}
			_ = m.WriteInt32(int32(i))
			_ = m.WriteArray(big[:len(big)*i/2])
			_ = m.WriteString(what)
			_, _ = m.Finish()
		}
	}()
	for i := range 3 {
		m, err := rp.Receive(ctx)
		if err != nil {
			t.Fatalf("%s: message %d: %v", what, i, err)
		}
		v, _ := m.ReadInt32()
		got := make([]float64, len(big)*i/2)
		aerr := m.ReadArray(got)
		s, serr := m.ReadString()
		if _, err := m.Finish(); err != nil || aerr != nil || serr != nil || v != int32(i) || s != what {
			t.Fatalf("%s: message %d read as %d %q (%v %v %v)", what, i, v, s, aerr, serr, err)
		}
		for k, x := range got {
			if x != float64(k) {
				t.Fatalf("%s: message %d element %d is %v", what, i, k, x)
			}
		}
	}
}
