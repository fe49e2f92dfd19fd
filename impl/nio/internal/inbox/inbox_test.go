package inbox

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/internal/fifo"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/serialization"
)

// TestPushModeManyToOne sends from several ports into one many-to-one port whose
// connections are pushed into inboxes in chunks of every size from one byte up, with
// messages small and large (larger than the point where an inbox starts streaming), and
// checks that every message arrives whole and each sender's messages in order.
func TestPushModeManyToOne(t *testing.T) {
	for _, chunk := range []int{1, 7, 4096, 100000} {
		t.Run(fmt.Sprintf("chunk%d", chunk), func(t *testing.T) { pushManyToOne(t, chunk) })
	}
}

func pushManyToOne(t *testing.T, chunk int) {
	defer goleak.VerifyNone(t)
	pt := ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.CommunicationNumbered)
	cfg := &ipl.Config{Pool: "push", PortTypes: []ipl.PortType{pt}, Logger: zap.NewNop(),
		ListenHost: "127.0.0.1", ConnectTimeout: 10 * time.Second, MaxMessageSize: 1 << 24}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	in, err := core.Open(ctx, cfg, "pipe", &pushTransport{chunk: chunk})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	rp, err := in.CreateReceivePort(ctx, pt, "in")
	if err != nil {
		t.Fatal(err)
	}
	const senders, perSender = 3, 20
	sizes := []int{0, 10, 3000, 100000}
	if chunk == 1 {
		sizes = []int{0, 10, 3000}
	}
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for s := range senders {
		sp, err := in.CreateSendPort(pt, fmt.Sprintf("out%d", s))
		if err != nil {
			t.Fatal(err)
		}
		if err := sp.Connect(ctx, in.Identifier(), "in"); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perSender {
				w, err := sp.NewMessage(ctx)
				if err != nil {
					errs <- err
					return
				}
				data := make([]float64, sizes[i%len(sizes)]/8)
				for k := range data {
					data[k] = float64(s*1000000 + i*1000 + k)
				}
				_ = w.WriteInt32(int32(s))
				_ = w.WriteInt32(int32(i))
				_ = w.WriteInt32(int32(len(data)))
				_ = w.WriteArray(data)
				if _, err := w.Finish(); err != nil {
					errs <- err
					return
				}
			}
			errs <- sp.Close()
		}()
	}
	next := make([]int32, senders)
	for range senders * perSender {
		m, err := rp.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := m.ReadInt32()
		i, _ := m.ReadInt32()
		n, err := m.ReadInt32()
		if err != nil || s < 0 || s >= senders || i != next[s] {
			t.Fatalf("got message %d of sender %d (want %d): %v", i, s, next[s], err)
		}
		next[s]++
		data := make([]float64, n)
		if err := m.ReadArray(data); err != nil {
			t.Fatal(err)
		}
		for k := range data {
			if data[k] != float64(int(s)*1000000+int(i)*1000+k) {
				t.Fatalf("sender %d message %d: element %d is %v", s, i, k, data[k])
			}
		}
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	for range senders {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// fakeConn is an accepted connection that is nothing but the hooks an inbox uses.
type fakeConn struct {
	closed  chan struct{}
	log     *zap.Logger
	retired []error
}

func (c *fakeConn) Progress()                       {}
func (c *fakeConn) CutErr() error                   { return nil }
func (c *fakeConn) Retire(err error)                { c.retired = append(c.retired, err) }
func (c *fakeConn) Closed() <-chan struct{}         { return c.closed }
func (c *fakeConn) Port() ipl.ReceivePortIdentifier { return ipl.ReceivePortIdentifier{Name: "in"} }
func (c *fakeConn) From() ipl.SendPortIdentifier    { return ipl.SendPortIdentifier{Name: "out"} }
func (c *fakeConn) Logger() *zap.Logger             { return c.log }

// bareInbox returns an inbox of a one-to-one port that is nothing but its bookkeeping,
// for tests that push bytes by hand and look at the inbox's states.
func bareInbox() *Inbox {
	c := &fakeConn{closed: make(chan struct{}), log: zap.NewNop()}
	return &Inbox{q: &Queue{pending: fifo.New[*Inbox]()}, c: c, wake: make(chan struct{}, 1)}
}

// rawPacket is a packet of n bytes (a multiple of 8) in its 8-bit section, with flags.
func rawPacket(flags byte, n int) []byte {
	p := make([]byte, serialization.HeaderSize+n)
	p[0], p[2] = serialization.Magic, flags
	binary.LittleEndian.PutUint32(p[8+4*5:], uint32(n)) // the 8-bit section is the sixth
	return p
}

// TestInboxStates pushes messages byte by byte and follows the inbox through its
// states: a small message can start once its packet is whole, a bulk one at its
// header; a header the reader refuses retires an idle inbox at once.
func TestInboxStates(t *testing.T) {
	b := bareInbox()
	check := func(what string, state inboxState, starts int) {
		t.Helper()
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.state != state || b.starts != starts {
			t.Fatalf("%s: %v with %d starts, want %v with %d", what, b.state, b.starts, state, starts)
		}
	}
	small := rawPacket(serialization.FlagEnd, 16)
	for i := range small {
		b.Push(small[i : i+1])
		if i < len(small)-1 {
			check("a small packet not yet whole", inboxIdle, 0)
		}
	}
	check("a whole small packet", inboxQueued, 1)
	if got := b.q.pop(); got != b {
		t.Fatalf("pop returned %p, want the inbox %p", got, b)
	}
	check("popped", inboxOwned, 1)
	b.take(make([]byte, len(small)))
	b.released()
	check("released", inboxIdle, 0)

	bulk := rawPacket(serialization.FlagEnd|serialization.FlagBulk, 64)
	b.Push(bulk[:serialization.HeaderSize-1])
	check("most of a bulk header", inboxIdle, 0)
	b.Push(bulk[serialization.HeaderSize-1 : serialization.HeaderSize])
	check("a bulk header", inboxQueued, 1)
	b.Push(bulk[serialization.HeaderSize:])
	check("a bulk body", inboxQueued, 1)
	b.q.pop()
	b.take(make([]byte, len(bulk)))
	b.released()
	check("bulk released", inboxIdle, 0)

	// The inbox now refuses what the reader refuses at a header, such as unknown
	// flags (its own scan used to check the magic byte and byte order only).
	bad := rawPacket(serialization.FlagEnd|0x40, 8)
	b.Push(bad)
	check("an unknown flag", inboxRetired, 0)
	if err := b.scan.Err(); !errors.Is(err, serialization.ErrCorrupt) || !strings.Contains(err.Error(), "unknown flags") {
		t.Fatalf("the scan stopped with %v", err)
	}
}

// TestInboxMoves checks the moves of the inbox's states and flows: those the tables
// list are taken, the others panic under a development logger (DPanic).
func TestInboxMoves(t *testing.T) {
	b := bareInbox()
	b.c.(*fakeConn).log = zap.NewNop().WithOptions(zap.Development())
	for from := range numInboxStates {
		for to := range numInboxStates {
			b.state = from
			if panicked := panics(func() { b.to(to) }); panicked == inboxMoves[from][to] {
				t.Errorf("state %v to %v: panicked %v", from, to, panicked)
			}
		}
	}
	for from := range numInboxFlows {
		for to := range numInboxFlows {
			b.flow = from
			if panicked := panics(func() { b.flowTo(to) }); panicked == flowMoves[from][to] {
				t.Errorf("flow %v to %v: panicked %v", from, to, panicked)
			}
		}
	}
	if !inboxMoves[inboxOwned][inboxIdle] || inboxMoves[inboxQueued][inboxRetired] || inboxMoves[inboxRetired][inboxIdle] {
		t.Error("the state table lost a move or gained one")
	}
	if numInboxStates.String() != "inboxState(4)" || inboxQueued.String() != "queued" || flowParked.String() != "parked" {
		t.Error("state names")
	}
}

// panics reports whether f panics.
func panics(f func()) (panicked bool) {
	defer func() { panicked = recover() != nil }()
	f()
	return false
}
