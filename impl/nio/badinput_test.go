package nio

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/impl/internal/impltest"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/serialization"
)

// Bad bytes on one connection close that connection only, whichever flavour reads it
// (the port type is many-to-one, so a forced blocking flavour leaves it nonblocking).
func TestBadInputClosesOnlyThatConnection(t *testing.T) {
	for _, f := range []string{"nonblocking", "thread"} {
		t.Run(f, func(t *testing.T) { impltest.BadInput(t, Name, map[string]string{PropertyReceive: f}) })
	}
}

func TestOversizeMessageRefused(t *testing.T) {
	for _, f := range []string{"blocking", "nonblocking", "thread"} {
		t.Run(f, func(t *testing.T) { impltest.OversizeRefused(t, Name, map[string]string{PropertySend: f}) })
	}
}

// A sender keeps to its receiver's smaller message limit, whatever its send flavour and
// the receiver's receive flavour.
func TestReceiverLimitRefused(t *testing.T) {
	for _, send := range []string{"blocking", "nonblocking", "thread"} {
		for _, recv := range []string{"nonblocking", "thread"} {
			t.Run(send+"-to-"+recv, func(t *testing.T) {
				impltest.ReceiverLimitRefused(t, Name, map[string]string{PropertySend: send, PropertyReceive: recv})
			})
		}
	}
}

// oneToOneBadType is the port type of the blocking bad-input test: a blocking receive
// port reads a single connection, so the type is one-to-one (a many-to-one type that
// asks for receiveport.blocking is refused). It is made when used: the flavour
// capabilities are registered by the package's init.
func oneToOneBadType() ipl.PortType {
	return ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.ConnectionUpcalls, ReceivePortBlocking)
}

// TestBadInputBlockingReceive is impltest.BadInput for the blocking receive flavour: bad
// bytes on the connection of a one-to-one blocking port close that connection with a
// lost-connection error that names the fault, a Receive waiting meanwhile neither hangs
// nor returns garbage, and the port then serves a new, well-behaved sender. A blocking
// port reads its connection only on the receiver's goroutine, so a Receive runs for the
// whole test.
func TestBadInputBlockingReceive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	oneToOneBadType := oneToOneBadType()
	ib, err := ipl.New(ctx, ipl.WithImplementation(Name), ipl.WithPortTypes(oneToOneBadType),
		ipl.WithMaxMessageSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Close()
	rec := portLost{lost: make(chan error, 10)}
	rp, err := ib.CreateReceivePort(ctx, oneToOneBadType, "in", ipl.WithConnectionHandler(rec))
	if err != nil {
		t.Fatal(err)
	}
	type received struct {
		v   int64
		err error
	}
	got := make(chan received, 10)
	go func() {
		for {
			m, err := rp.Receive(ctx)
			if err != nil {
				got <- received{err: err}
				return
			}
			v, err := m.ReadInt64()
			if _, ferr := m.Finish(); err == nil {
				err = ferr
			}
			got <- received{v: v, err: err}
		}
	}()

	header := func(flags byte, counts [6]uint32) []byte {
		h := make([]byte, 32)
		h[0], h[1], h[2] = 0xB1, 0, flags
		for i, n := range counts {
			binary.LittleEndian.PutUint32(h[8+4*i:], n)
		}
		return h
	}
	bad := []struct {
		name string
		b    []byte
		want []error // the lost-connection error wraps one of these (besides ErrConnectionLost)
	}{
		{"garbage", []byte("this is not an Ibis packet at all, not even close......."), []error{serialization.ErrCorrupt}},
		{"absurd length", header(0x01|0x02, [6]uint32{0, 0, 0, 0, 0, 0xFFFFFFFF}), []error{serialization.ErrCorrupt, serialization.ErrTooLarge}},
		{"over maximum", header(0x01, [6]uint32{1 << 28, 0, 0, 0, 0, 0}), []error{serialization.ErrCorrupt, serialization.ErrTooLarge}},
		{"truncated", header(0x01, [6]uint32{0, 0, 0, 1000, 0, 0})[:20], []error{io.EOF, io.ErrUnexpectedEOF}},
		{"truncated body", header(0x01, [6]uint32{0, 0, 0, 1000, 0, 0}), []error{serialization.ErrCorrupt, io.EOF, io.ErrUnexpectedEOF}},
	}
	for _, tc := range bad {
		// Each connects once the previous one was reported lost: a one-to-one port
		// refuses a second sender, so this also checks that the bad one was retired.
		c := impltest.RawConnect(t, ib, oneToOneBadType, "in")
		if _, err := c.Write(tc.b); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if strings.HasPrefix(tc.name, "truncated") {
			_ = c.(*net.TCPConn).CloseWrite()
		}
		impltest.ExpectClosed(t, tc.name, c)
		select {
		case err := <-rec.lost:
			if !errors.Is(err, ipl.ErrConnectionLost) {
				t.Errorf("%s: lost connection reported as %v, want ErrConnectionLost", tc.name, err)
			}
			named := false
			for _, w := range tc.want {
				named = named || errors.Is(err, w)
			}
			if !named {
				t.Errorf("%s: lost connection reported as %v, want it to wrap one of %v", tc.name, err, tc.want)
			}
		case <-ctx.Done():
			t.Fatalf("%s: no LostConnection upcall", tc.name)
		}
		select {
		case r := <-got:
			t.Fatalf("%s: Receive returned %d, %v for a connection with bad bytes", tc.name, r.v, r.err)
		default:
		}
	}
	// Garbage instead of a handshake: dropped before it reaches the port.
	c, err := net.Dial("tcp", ib.Identifier().Address)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	impltest.ExpectClosed(t, "no handshake", c)

	// A real sender is served by the same port and the same Receive.
	sp, err := ib.CreateSendPort(oneToOneBadType, "")
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
	_ = m.WriteInt64(7)
	if _, err := m.Finish(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.v != 7 || r.err != nil {
			t.Errorf("the healthy sender's message read as %d, %v", r.v, r.err)
		}
	case <-ctx.Done():
		t.Fatal("the healthy sender's message never arrived")
	}
	if err := ib.Close(); err != nil {
		t.Error(err)
	}
	if r := <-got; !errors.Is(r.err, ipl.ErrClosed) {
		t.Errorf("Receive after Close: %v, want ErrClosed", r.err)
	}
}

// A peer that stops in the middle of a message is cut after the message timeout, on
// the receive flavours of a many-to-one port.
func TestStalledSendersAreCut(t *testing.T) {
	for _, f := range []string{"nonblocking", "thread"} {
		t.Run(f, func(t *testing.T) { impltest.StalledSenders(t, Name, map[string]string{PropertyReceive: f}) })
	}
}

// A connection request from outside the pool is refused, whichever flavour would serve it.
func TestStrangersRefused(t *testing.T) {
	for _, f := range []string{"blocking", "nonblocking", "thread"} {
		t.Run(f, func(t *testing.T) { impltest.Strangers(t, Name, map[string]string{PropertyReceive: f}) })
	}
}

func TestPoolSecret(t *testing.T) {
	for _, f := range []string{"blocking", "nonblocking", "thread"} {
		t.Run(f, func(t *testing.T) { impltest.PoolSecret(t, Name, map[string]string{PropertyReceive: f}) })
	}
}

func TestTLSRefused(t *testing.T) { impltest.NoTLS(t, Name) }

// A bad nio.spin is refused by New, naming the property.
func TestSpinPropertyRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := ipl.New(ctx, ipl.WithImplementation(Name), ipl.WithPortTypes(oneToOneBadType()), ipl.WithProperty(PropertySpin, "soon"))
	if !errors.Is(err, ipl.ErrInvalidArgument) || !strings.Contains(err.Error(), PropertySpin) {
		t.Fatalf("nio.spin=soon: %v, want an error naming the property", err)
	}
}
