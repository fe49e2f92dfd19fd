package impltest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/ipl"
)

// rawDial connects to addr and passes the pool check of an open pool (internal/poolauth),
// naming pool, as a peer without a secret does.
func rawDial(t *testing.T, addr, pool string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := poolauth.Dial(c, pool, poolauth.Secret{}); err != nil {
		_ = c.Close()
		t.Fatalf("pool check with %s: %v", addr, err)
	}
	return c
}

// RawConnectAs is RawConnect with the sending port's name chosen, so that one test can
// hold several raw connections to one many-to-one port.
func RawConnectAs(t *testing.T, ib ipl.Ibis, pt ipl.PortType, port, from string) net.Conn {
	t.Helper()
	c := rawDial(t, ib.Identifier().Address, ib.Identifier().Pool)
	req := &core.Request{From: ipl.SendPortIdentifier{Ibis: ib.Identifier(), Name: from}, To: port, PortType: pt.String()}
	if err := core.WriteRequest(c, req); err != nil {
		t.Fatal(err)
	}
	rep, err := core.ReadReply(c)
	if err != nil || rep.Code != core.ReplyAccepted {
		t.Fatalf("raw handshake of %s: %+v, %v", from, rep, err)
	}
	return c
}

// StalledSenders checks that peers which stop in the middle of a message (an outside
// process that completed the handshake, or a slow-loris) are cut after the message
// timeout, each reported as a lost connection matching ipl.ErrStalled, while a real
// sender's messages go on being received meanwhile.
func StalledSenders(t *testing.T, impl string, props map[string]string) {
	ib := NewIbis(t, impl, props, ipl.WithMessageTimeout(time.Second))
	rec := lostRecorder{lost: make(chan error, 10)}
	rp, err := ib.CreateReceivePort(t.Context(), dataType, "in", ipl.WithConnectionHandler(rec))
	if err != nil {
		t.Fatal(err)
	}
	stalls := []struct {
		name  string
		bytes []byte
	}{
		// A small packet announcing 64,000 bytes of int64s, of which 1,000 come.
		{"unfinished packet", append(header(0x01, [6]uint32{8000, 0, 0, 0, 0, 0}), make([]byte, 1000)...)},
		// A bulk packet announcing 1 GiB, of which 10 MiB come.
		{"unfinished bulk", append(header(0x01|0x02, [6]uint32{1<<27 - 8, 0, 0, 0, 0, 0}), make([]byte, 10<<20)...)},
		// Slow-loris: part of a header, then nothing.
		{"half a header", header(0x01, [6]uint32{1, 0, 0, 0, 0, 0})[:20]},
	}
	raws := make([]net.Conn, len(stalls))
	for i, s := range stalls {
		raws[i] = RawConnectAs(t, ib, dataType, "in", fmt.Sprintf("raw-%d", i))
		go func(c net.Conn, b []byte) { _, _ = c.Write(b) }(raws[i], s.bytes)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sp, err := ib.CreateSendPort(dataType, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Connect(ctx, ib.Identifier(), "in"); err != nil {
		t.Fatal(err)
	}
	// The real sender's messages arrive while the raw ones stall; a raw message that
	// the port hands out fails with ErrStalled once it is cut.
	const real = 50
	go func() {
		for k := range int64(real) {
			m, err := sp.NewMessage(ctx)
			if err != nil {
				return
			}
			_ = m.WriteInt64(k)
			if _, err := m.Finish(); err != nil {
				return
			}
		}
	}()
	got, lost := 0, 0
	for got < real || lost < len(stalls) {
		select {
		case err := <-rec.lost:
			if !errors.Is(err, ipl.ErrStalled) || !errors.Is(err, ipl.ErrConnectionLost) {
				t.Errorf("a stalled connection was reported lost with %v; want ErrStalled and ErrConnectionLost", err)
			}
			lost++
			continue
		default:
		}
		rctx, rcancel := context.WithTimeout(ctx, 100*time.Millisecond)
		m, err := rp.Receive(rctx)
		rcancel()
		if errors.Is(err, ipl.ErrTimeout) && ctx.Err() == nil {
			continue // nothing yet: look at the lost connections again
		}
		if err != nil {
			t.Fatalf("receive after %d real messages and %d cut connections: %v", got, lost, err)
		}
		if m.Origin().Name != sp.Identifier().Name {
			_, _ = m.ReadInt64()
			if _, err := m.Finish(); !errors.Is(err, ipl.ErrStalled) && !errors.Is(err, ipl.ErrConnectionLost) {
				t.Errorf("the stalled message from %s finished with %v", m.Origin().Name, err)
			}
			continue
		}
		if v, err := m.ReadInt64(); err != nil || v != int64(got) {
			t.Fatalf("real message %d: %d, %v", got, v, err)
		}
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
		got++
	}
	for i, c := range raws {
		ExpectClosed(t, stalls[i].name, c)
	}
}

// Strangers checks that a connection request from outside the pool (another pool's
// name, or a member number nobody has heard of) is refused and the connection dropped
// at once: a peer outside the pool reaches no port.
func Strangers(t *testing.T, impl string, props map[string]string) {
	ib := NewIbis(t, impl, props)
	if _, err := ib.CreateReceivePort(t.Context(), dataType, "in"); err != nil {
		t.Fatal(err)
	}
	me := ib.Identifier()
	for name, from := range map[string]ipl.IbisIdentifier{
		"another pool": {Pool: me.Pool + "-not", ID: me.ID, Address: me.Address},
		"no pool":      {ID: me.ID, Address: me.Address},
		"not a member": {Pool: me.Pool, ID: "999999", Address: "127.0.0.1:1"},
	} {
		c := rawDial(t, me.Address, from.Pool) // an open pool lets any pool name through its check
		req := &core.Request{From: ipl.SendPortIdentifier{Ibis: from, Name: "stranger"}, To: "in", PortType: dataType.String()}
		if err := core.WriteRequest(c, req); err != nil {
			t.Fatal(err)
		}
		rep, err := core.ReadReply(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rep.Code == core.ReplyAccepted {
			t.Errorf("%s: a stranger's connection was accepted", name)
		}
		ExpectClosed(t, name, c)
	}
}
