package impltest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// int64Packet is a data packet of the int64 values first, first+1, ...; end marks the
// last packet of its message.
func int64Packet(end bool, first int64, n int) []byte {
	var flags byte
	if end {
		flags = 0x01
	}
	p := header(flags, [6]uint32{0, uint32(n), 0, 0, 0, 0}) // section 1: int64
	for k := range int64(n) {
		p = binary.LittleEndian.AppendUint64(p, uint64(first+k))
	}
	return p
}

// readRun reads n int64 values from m and checks that they count up from first.
func readRun(m ipl.ReadMessage, first int64, n int) error {
	for k := range int64(n) {
		v, err := m.ReadInt64()
		if err != nil {
			return fmt.Errorf("value %d: %w", k, err)
		}
		if v != first+k {
			return fmt.Errorf("value %d is %d, want %d", k, v, first+k)
		}
	}
	_, err := m.Finish()
	return err
}

// sendRuns sends count messages of n int64 values each (value j of message k is
// k*n+j), written one by one, so that a message of more than a packet leaves packet by
// packet.
func sendRuns(ctx context.Context, sp ipl.SendPort, count, n int) error {
	for k := range count {
		m, err := sp.NewMessage(ctx)
		if err != nil {
			return err
		}
		for j := range n {
			if err := m.WriteInt64(int64(k*n + j)); err != nil {
				return err
			}
		}
		if _, err := m.Finish(); err != nil {
			return fmt.Errorf("message %d: %w", k, err)
		}
	}
	return nil
}

// WholeMessagesFirst checks the rule of a many-to-one port (core.WholeMessageLimit): a
// message whose first packet has arrived but whose rest has not is not handed to the
// receiver, which meanwhile gets the other senders' complete messages; once its rest
// arrives it is delivered intact, in its connection's order. The message timeout is
// far away, so no cut plays a part: the test waits only for events.
func WholeMessagesFirst(t *testing.T, impl string, props map[string]string) {
	ib := NewIbis(t, impl, props, ipl.WithMessageTimeout(10*time.Minute))
	rec := lostRecorder{lost: make(chan error, 10)}
	rp, err := ib.CreateReceivePort(t.Context(), dataType, "in", ipl.WithConnectionHandler(rec))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Two senders begin a message of two packets and hold back its end: one with a
	// small first packet, one with a first packet larger than a socket read buffer.
	small := RawConnectAs(t, ib, dataType, "in", "small")
	large := RawConnectAs(t, ib, dataType, "in", "large")
	write := func(c net.Conn, b []byte) {
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	write(small, int64Packet(false, 0, 100))
	write(large, int64Packet(false, 0, 8000))

	sp, err := ib.CreateSendPort(dataType, "real")
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Connect(ctx, ib.Identifier(), "in"); err != nil {
		t.Fatal(err)
	}
	// Whole messages of one packet and of two (10,000 values: 80 KB).
	const count = 20
	sizes := []int{10, 10000}
	sent := make(chan error, 1)
	go func() {
		var err error
		for _, n := range sizes {
			if err = sendRuns(ctx, sp, count, n); err != nil {
				break
			}
		}
		sent <- err
	}()
	for _, n := range sizes {
		for k := range count {
			m, err := rp.Receive(ctx)
			if err != nil {
				t.Fatalf("receive of the whole message %d of %d values: %v", k, n, err)
			}
			if from := m.Origin().Name; from != "real" {
				t.Fatalf("the message of %s was handed out before its end arrived (whole message %d of %d values was due)", from, k, n)
			}
			if err := readRun(m, int64(k*n), n); err != nil {
				t.Fatalf("whole message %d of %d values: %v", k, n, err)
			}
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	// The ends come (the large sender's with a whole message after it, in one write):
	// both messages are delivered intact, each connection in order.
	write(small, int64Packet(true, 100, 10))
	write(large, append(int64Packet(true, 8000, 10), int64Packet(true, 0, 3)...))
	want := map[string][]struct{ first, n int }{
		"small": {{0, 110}},
		"large": {{0, 8010}, {0, 3}},
	}
	for left := 3; left > 0; left-- {
		m, err := rp.Receive(ctx)
		if err != nil {
			t.Fatalf("receive of a completed message: %v", err)
		}
		from := m.Origin().Name
		if len(want[from]) == 0 {
			t.Fatalf("an unexpected message from %s", from)
		}
		w := want[from][0]
		want[from] = want[from][1:]
		if err := readRun(m, int64(w.first), w.n); err != nil {
			t.Fatalf("the completed message of %s: %v", from, err)
		}
	}
	select {
	case err := <-rec.lost:
		t.Fatalf("a connection was lost: %v", err)
	default:
	}
	_ = small.Close()
	_ = large.Close()
}

// StalledSendersCutTogether checks that senders which stop in the middle of messages
// are cut together, each a message timeout or a little more after it stopped, not
// one after another, while the port goes on delivering a healthy sender's messages;
// none of the unfinished messages is handed out. The lower bound (no cut before a
// timeout) holds whatever the load; the upper bound is generous (cutting the eight
// one after another would take at least eight timeouts).
func StalledSendersCutTogether(t *testing.T, impl string, props map[string]string) {
	const (
		timeout = 2 * time.Second
		stalled = 8
		bound   = 5 * timeout
	)
	ib := NewIbis(t, impl, props, ipl.WithMessageTimeout(timeout))
	rec := &timedLost{lost: make(chan lostAt, stalled+1)}
	rp, err := ib.CreateReceivePort(t.Context(), dataType, "in", ipl.WithConnectionHandler(rec))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	raws := make([]net.Conn, stalled)
	for i := range raws {
		raws[i] = RawConnectAs(t, ib, dataType, "in", fmt.Sprintf("stalled-%d", i))
	}
	// Each begins a message and stops: its first packet whole (small ones and ones
	// larger than a socket read buffer), its end never sent.
	began := time.Now()
	var wg sync.WaitGroup
	for i, c := range raws {
		n := 100
		if i%2 == 1 {
			n = 8000
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = c.Write(int64Packet(false, 0, n))
		}()
	}
	wg.Wait()
	wrote := time.Now()

	sp, err := ib.CreateSendPort(dataType, "real")
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Connect(ctx, ib.Identifier(), "in"); err != nil {
		t.Fatal(err)
	}
	// A healthy sender, one message at a time (the next once the last was received),
	// until the cuts are all seen.
	more := make(chan bool, 1)
	sent := make(chan error, 1)
	go func() {
		for <-more {
			if err := sendRuns(ctx, sp, 1, 10); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	more <- true
	var cuts []time.Time
	n := 0
	for len(cuts) < stalled {
		select {
		case l := <-rec.lost:
			if !errors.Is(l.err, ipl.ErrStalled) || !errors.Is(l.err, ipl.ErrConnectionLost) {
				t.Errorf("a stalled connection was reported lost with %v; want ErrStalled and ErrConnectionLost", l.err)
			}
			cuts = append(cuts, l.at)
			continue
		default:
		}
		rctx, rcancel := context.WithTimeout(ctx, 100*time.Millisecond)
		m, err := rp.Receive(rctx)
		rcancel()
		if errors.Is(err, ipl.ErrTimeout) && ctx.Err() == nil {
			continue
		}
		if err != nil {
			t.Fatalf("receive after %d healthy messages and %d cuts: %v", n, len(cuts), err)
		}
		if from := m.Origin().Name; from != "real" {
			t.Fatalf("the unfinished message of %s was handed out", from)
		}
		if err := readRun(m, 0, 10); err != nil {
			t.Fatal(err)
		}
		n++
		more <- true
	}
	// The one healthy message on its way, if any, is taken before the sender stops.
	more <- false
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("the healthy sender sent nothing while the others stalled")
	}
	first, last := cuts[0].Sub(began), cuts[0].Sub(began)
	for _, at := range cuts {
		first, last = min(first, at.Sub(began)), max(last, at.Sub(began))
	}
	t.Logf("%d stalled senders cut %v to %v after they stalled (message timeout %v); %d healthy messages meanwhile",
		stalled, first.Round(time.Millisecond), last.Round(time.Millisecond), timeout, n)
	for i, at := range cuts {
		if d := at.Sub(began); d < timeout {
			t.Errorf("cut %d came %v after the stall began, before the message timeout (%v)", i, d, timeout)
		}
		if d := at.Sub(wrote); d > bound {
			t.Errorf("cut %d came %v after the stalls began, more than %v: cut one after another?", i, d, bound)
		}
	}
	for i, c := range raws {
		ExpectClosed(t, fmt.Sprintf("stalled sender %d", i), c)
	}
}

// lostAt is a lost connection and when it was reported.
type lostAt struct {
	err error
	at  time.Time
}

// timedLost records when each connection is reported lost.
type timedLost struct{ lost chan lostAt }

func (l *timedLost) GotConnection(ipl.ReceivePort, ipl.SendPortIdentifier) bool { return true }
func (l *timedLost) LostConnection(_ ipl.ReceivePort, _ ipl.SendPortIdentifier, err error) {
	l.lost <- lostAt{err: err, at: time.Now()}
}
