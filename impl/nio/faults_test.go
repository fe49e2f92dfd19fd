package nio

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/ipl"
)

var queuedType = ipl.MustPortType(ipl.ConnectionOneToMany, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO)

// A message larger than every buffer on the way (the sender's queue and both kernels')
// cannot have reached a receiver that never read; when that receiver goes away, Finish
// says so instead of reporting it sent.
func TestFinishReportsUndeliveredMessage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ib, err := ipl.New(ctx, ipl.WithImplementation(Name), ipl.WithPortTypes(queuedType), ipl.WithMaxMessageSize(256<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Close()
	rp, err := ib.CreateReceivePort(ctx, queuedType, "in")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ib.CreateSendPort(queuedType, "") // one-to-many: queued (nonblocking) sends
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Connect(ctx, ib.Identifier(), "in"); err != nil {
		t.Fatal(err)
	}
	m, err := sp.NewMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		werr := m.WriteArray(make([]int64, 16<<20)) // 128 MiB
		_, ferr := m.Finish()
		done <- errors.Join(werr, ferr)
	}()
	_ = rp.Close() // nothing was ever read
	if err := <-done; !errors.Is(err, ipl.ErrConnectionLost) {
		t.Fatalf("Finish of a message the receiver never read: %v, want ErrConnectionLost", err)
	}
}

// A sender that stops halfway through the first packet of a message holds up nobody:
// the port delivers the other senders' messages meanwhile (as impl/tcp does).
func TestStalledSenderHoldsUpNobody(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ib, err := ipl.New(ctx, ipl.WithImplementation(Name), ipl.WithPortTypes(flowType))
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Close()
	rp, err := ib.CreateReceivePort(ctx, flowType, "in") // many-to-one: nonblocking
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", ib.Identifier().Address)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := poolauth.Dial(c, ib.Identifier().Pool, poolauth.Secret{}); err != nil {
		t.Fatal(err)
	}
	req := &core.Request{From: ipl.SendPortIdentifier{Ibis: ib.Identifier(), Name: "stalled"}, To: "in", PortType: flowType.String()}
	if err := core.WriteRequest(c, req); err != nil {
		t.Fatal(err)
	}
	if rep, err := core.ReadReply(c); err != nil || rep.Code != core.ReplyAccepted {
		t.Fatalf("handshake: %+v %v", rep, err)
	}
	h := make([]byte, 32) // the header of a legal 64 KiB packet, and nothing of its body
	h[0], h[1], h[2] = 0xB1, 0, 0x01
	binary.LittleEndian.PutUint32(h[8:], 8192)
	if _, err := c.Write(h); err != nil {
		t.Fatal(err)
	}
	sp, err := ib.CreateSendPort(flowType, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Connect(ctx, ib.Identifier(), "in"); err != nil {
		t.Fatal(err)
	}
	for i := range int64(3) {
		m, err := sp.NewMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_ = m.WriteInt64(i)
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
		r, err := rp.Receive(ctx)
		if err != nil {
			t.Fatalf("message %d of the healthy sender: %v", i, err)
		}
		if v, err := r.ReadInt64(); v != i || err != nil {
			t.Fatalf("message %d read as %d, %v", i, v, err)
		}
		_, _ = r.Finish()
	}
}
