// Package impltest holds tests that every implementation must pass in-process, against
// its own sockets, beyond the cross-process conformance suite: what it does with bytes
// that are not a well-formed stream.
package impltest

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/ipl"
)

// dataType is the many-to-one data port type the bad-input tests use.
var dataType = ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.ConnectionUpcalls)

type lostRecorder struct{ lost chan error }

func (l lostRecorder) GotConnection(ipl.ReceivePort, ipl.SendPortIdentifier) bool { return true }
func (l lostRecorder) LostConnection(_ ipl.ReceivePort, _ ipl.SendPortIdentifier, err error) {
	l.lost <- err
}

// NewIbis opens an Ibis of implementation impl with the given properties for the length
// of the test; dataType is declared, and opts may declare more.
func NewIbis(t *testing.T, impl string, props map[string]string, opts ...ipl.Option) ipl.Ibis {
	t.Helper()
	for k, v := range props {
		opts = append(opts, ipl.WithProperty(k, v))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ib, err := ipl.New(ctx, append([]ipl.Option{ipl.WithImplementation(impl), ipl.WithPortTypes(dataType)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ib.Close() })
	return ib
}

// RawConnect opens a connection to port as if it were a send port of type pt, without
// any of the checks a real send port makes, for tests that then write bad bytes.
func RawConnect(t *testing.T, ib ipl.Ibis, pt ipl.PortType, port string) net.Conn {
	t.Helper()
	c := rawDial(t, ib.Identifier().Address, ib.Identifier().Pool)
	req := &core.Request{From: ipl.SendPortIdentifier{Ibis: ib.Identifier(), Name: "raw"}, To: port, PortType: pt.String()}
	if err := core.WriteRequest(c, req); err != nil {
		t.Fatal(err)
	}
	rep, err := core.ReadReply(c)
	if err != nil || rep.Code != core.ReplyAccepted {
		t.Fatalf("raw handshake: %+v, %v", rep, err)
	}
	return c
}

// ExpectClosed waits until the peer closes c (at most 30 seconds), then closes c; what
// names the case in the failure.
func ExpectClosed(t *testing.T, what string, c net.Conn) {
	t.Helper()
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.Copy(io.Discard, c); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("%s: the connection with bad data was not closed", what)
		}
	}
}

func header(flags byte, counts [6]uint32) []byte {
	h := make([]byte, 32)
	h[0], h[1], h[2] = 0xB1, 0, flags
	for i, n := range counts {
		binary.LittleEndian.PutUint32(h[8+4*i:], n)
	}
	return h
}

// BadInput checks that bad bytes on one connection close that connection only: the port keeps serving others.
func BadInput(t *testing.T, impl string, props map[string]string) {
	ib := NewIbis(t, impl, props, ipl.WithMaxMessageSize(1<<20))
	rec := lostRecorder{lost: make(chan error, 10)}
	rp, err := ib.CreateReceivePort(t.Context(), dataType, "in", ipl.WithConnectionHandler(rec))
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string][]byte{
		"garbage":       []byte("this is not an Ibis packet at all, not even close......."),
		"absurd length": header(0x01|0x02, [6]uint32{0, 0, 0, 0, 0, 0xFFFFFFFF}),
		"over maximum":  header(0x01, [6]uint32{1 << 28, 0, 0, 0, 0, 0}),
		"truncated":     header(0x01, [6]uint32{0, 0, 0, 1000, 0, 0})[:20],
	}
	for name, b := range bad {
		c := RawConnect(t, ib, dataType, "in")
		if _, err := c.Write(b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "truncated" {
			_ = c.(*net.TCPConn).CloseWrite()
		}
		ExpectClosed(t, name, c)
		if err := <-rec.lost; !errors.Is(err, ipl.ErrConnectionLost) {
			t.Errorf("%s: lost connection reported as %v", name, err)
		}
	}
	// Garbage instead of a handshake: dropped before it reaches any port.
	c, err := net.Dial("tcp", ib.Identifier().Address)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	ExpectClosed(t, "no handshake", c)

	// A real sender is still served.
	sp, err := ib.CreateSendPort(dataType, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := sp.Connect(ctx, ib.Identifier(), "in"); err != nil {
		t.Fatal(err)
	}
	m, err := sp.NewMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = m.WriteInt64(7)
	if _, err := m.Finish(); err != nil {
		t.Fatal(err)
	}
	r, err := rp.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := r.ReadInt64(); v != 7 || err != nil {
		t.Errorf("read %d, %v", v, err)
	}
	if _, err := r.Finish(); err != nil {
		t.Error(err)
	}
}

// OversizeRefused checks that a message bigger than the maximum is refused by the sender before it is sent (the
// receiver's own refusal is tested with raw bytes above).
func OversizeRefused(t *testing.T, impl string, props map[string]string) {
	ib := NewIbis(t, impl, props, ipl.WithMaxMessageSize(64<<10))
	if _, err := ib.CreateReceivePort(t.Context(), dataType, "in"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sp, _ := ib.CreateSendPort(dataType, "")
	if err := sp.Connect(ctx, ib.Identifier(), "in"); err != nil {
		t.Fatal(err)
	}
	m, _ := sp.NewMessage(ctx)
	err := m.WriteArray(make([]float64, 1<<16)) // 512 KiB
	_, ferr := m.Finish()
	if !errors.Is(err, ipl.ErrTooLarge) && !errors.Is(ferr, ipl.ErrTooLarge) {
		t.Errorf("oversize message: %v / %v, want ErrTooLarge", err, ferr)
	}
}
