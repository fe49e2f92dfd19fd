package nio

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// trackPackets gives the package a fresh packet pool for the length of the test, one
// that remembers every packet it makes, and returns what it made so far. The pool is
// replaced (not just its New) so that no packet made before the test is handed out
// untracked. No Ibis may be open while it is replaced.
func trackPackets(t *testing.T) func() []*packet {
	var mu sync.Mutex
	var made []*packet
	packetPool = sync.Pool{New: func() any {
		p := new(packet)
		mu.Lock()
		made = append(made, p)
		mu.Unlock()
		return p
	}}
	t.Cleanup(func() { packetPool = sync.Pool{New: func() any { return new(packet) }} })
	return func() []*packet {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(made)
	}
}

// outstanding counts the packets somebody still holds a reference to.
func outstanding(ps []*packet) int {
	n := 0
	for _, p := range ps {
		if p.refs.Load() != 0 {
			n++
		}
	}
	return n
}

// TestPacketReferenceCount: a packet is a copy of the buffers it was made from, it goes
// back to the pool with its last reference (and not before), a packet too large to keep
// is left to the collector, and a release too many panics.
func TestPacketReferenceCount(t *testing.T) {
	made := trackPackets(t)
	p := newPacket(net.Buffers{[]byte("hello, "), []byte("world")})
	if string(p.b) != "hello, world" || p.refs.Load() != 1 {
		t.Fatalf("new packet holds %q with %d references", p.b, p.refs.Load())
	}
	p.retain()
	p.retain()
	for want := int32(2); want >= 1; want-- {
		p.Release()
		if got := p.refs.Load(); got != want || len(p.b) == 0 {
			t.Fatalf("after a release: %d references, %d bytes; want %d references and the bytes kept", got, len(p.b), want)
		}
	}
	p.Release()
	if p.refs.Load() != 0 || len(p.b) != 0 {
		t.Fatalf("after the last release: %d references, %d bytes; want it back in the pool, empty", p.refs.Load(), len(p.b))
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a release more than retained did not panic")
			}
		}()
		p.Release()
	}()
	p.refs.Store(0) // undo the bad release: p is in the pool

	huge := newPacket(net.Buffers{make([]byte, maxPooledPacket+1)})
	huge.Release()
	if huge.refs.Load() != 0 || len(huge.b) != maxPooledPacket+1 {
		t.Errorf("a packet over maxPooledPacket: %d references, %d bytes; want it dropped as it was", huge.refs.Load(), len(huge.b))
	}
	if len(made()) == 0 {
		t.Fatal("the packets did not come from the tracked pool")
	}
}

var multicastType = ipl.MustPortType(ipl.ConnectionOneToMany, ipl.SerializationData, ipl.ReceiveExplicit,
	ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.ConnectionUpcalls)

// TestMulticastPacketsReturnToPool: a one-to-many send port of each queued flavour
// multicasts messages (small ones, and large ones well over a connection's queue limit)
// to four receivers: two that read at once, one that reads slowly, and one that closes
// its port in the middle of a large message. Every receiver still there gets every
// message intact (a buffer back in the pool too early would be reused by a later message
// and show up as wrong bytes), the sender hears of the one that left, and once the last
// message is finished no packet is still referenced: the multicast buffers are all
// released, including those queued for the connection that broke. After everything is
// closed each packet has gone back to the pool, its count at zero.
func TestMulticastPacketsReturnToPool(t *testing.T) {
	for _, f := range []string{"nonblocking", "thread"} {
		t.Run(f, func(t *testing.T) { multicastPackets(t, f) })
	}
}

func multicastPackets(t *testing.T, flavour string) {
	const (
		messages = 30
		chunk    = 64 << 10 // int64s per WriteArray: 512 KiB
		small    = 4 << 10  // int64s of a small message: 32 KiB
		bigParts = 16       // chunks of a large message: 8 MiB, over queueHighWater
		quitAt   = 15       // the quitter leaves while reading this (large) message
	)
	isBig := func(i int) bool { return i%10 == 5 }
	value := func(i, k int) int64 { return int64(i)<<32 | int64(k) }

	made := trackPackets(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ib, err := ipl.New(ctx, ipl.WithImplementation(Name), ipl.WithPortTypes(multicastType),
		ipl.WithProperty(PropertySend, flavour), ipl.WithMaxMessageSize(64<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Close()
	// A reader stuck for good is ended by closing the Ibis when the context runs out.
	stop := context.AfterFunc(ctx, func() { _ = ib.Close() })
	defer stop()

	names := []string{"fast-0", "fast-1", "slow", "quitter"}
	rps := map[string]ipl.ReceivePort{}
	for _, name := range names {
		rp, err := ib.CreateReceivePort(ctx, multicastType, name)
		if err != nil {
			t.Fatal(err)
		}
		rps[name] = rp
	}
	left := make(chan error, len(names))
	sp, err := ib.CreateSendPort(multicastType, "multicast",
		ipl.WithDisconnectHandler(func(_ ipl.SendPort, to ipl.ReceivePortIdentifier, err error) {
			left <- fmt.Errorf("%s: %w", to.Name, err)
		}))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if err := sp.Connect(ctx, ib.Identifier(), name); err != nil {
			t.Fatal(err)
		}
	}

	// The receivers check every word of every message.
	read := func(name string) error {
		rp := rps[name]
		got := make([]int64, chunk)
		for i := range messages {
			m, err := rp.Receive(ctx)
			if err != nil {
				return fmt.Errorf("message %d: %w", i, err)
			}
			if v, err := m.ReadInt64(); v != int64(i) || err != nil {
				return fmt.Errorf("message %d starts with %d, %v", i, v, err)
			}
			parts, n := 1, small
			if isBig(i) {
				parts, n = bigParts, chunk
			}
			for part := range parts {
				if err := m.ReadArray(got[:n]); err != nil {
					return fmt.Errorf("message %d part %d: %w", i, part, err)
				}
				for k, v := range got[:n] {
					if want := value(i, part*n+k); v != want {
						return fmt.Errorf("message %d part %d word %d is %#x, want %#x", i, part, k, v, want)
					}
				}
				if name == "quitter" && i == quitAt {
					// Leaves with the message live and most of it still on the way.
					return rp.Close()
				}
				if name == "slow" {
					time.Sleep(2 * time.Millisecond) // pacing only: the sender's queue fills meanwhile
				}
			}
			if _, err := m.Finish(); err != nil {
				return fmt.Errorf("message %d: %w", i, err)
			}
		}
		return nil
	}
	results := make(chan error, len(names))
	for _, name := range names {
		go func() {
			if err := read(name); err != nil {
				results <- fmt.Errorf("%s: %w", name, err)
				return
			}
			results <- nil
		}()
	}

	data := make([]int64, bigParts*chunk)
	for i := range messages {
		parts, n := 1, small
		if isBig(i) {
			parts, n = bigParts, chunk
		}
		for k := range parts * n {
			data[k] = value(i, k)
		}
		m, err := sp.NewMessage(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		werr := m.WriteInt64(int64(i))
		for part := range parts {
			werr = errors.Join(werr, m.WriteArray(data[part*n:(part+1)*n]))
		}
		_, ferr := m.Finish()
		if err := errors.Join(werr, ferr); err != nil && !errors.Is(err, ipl.ErrConnectionLost) {
			// Losing the quitter may show as a lost connection; nothing else may go wrong.
			t.Fatalf("message %d: %v", i, err)
		}
	}
	for range names {
		select {
		case err := <-results:
			if err != nil {
				t.Error(err)
			}
		case <-ctx.Done():
			t.Fatal("a receiver did not finish")
		}
	}
	select {
	case err := <-left:
		if !errors.Is(err, ipl.ErrConnectionLost) {
			t.Errorf("the quitter's leaving was reported as %v, want ErrConnectionLost", err)
		}
	case <-ctx.Done():
		t.Fatal("the send port never heard that the quitter left")
	}
	if got := len(sp.ConnectedTo()); got != len(names)-1 {
		t.Errorf("the send port lists %d receivers, want %d", got, len(names)-1)
	}

	// Every message is finished, so every packet of it has been written or dropped;
	// the event loop may still be releasing what a write to the quitter held.
	for outstanding(made()) != 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("%d of %d packets are still referenced after the last message was finished",
				outstanding(made()), len(made()))
		case <-time.After(time.Millisecond):
		}
	}
	if err := sp.Close(); err != nil {
		t.Error(err)
	}
	if err := ib.Close(); err != nil {
		t.Error(err)
	}
	// The event loops have ended: the packets can be looked at without racing them.
	all := made()
	if len(all) == 0 {
		t.Fatal("the multicast did not take its packets from the pool")
	}
	for i, p := range all {
		if r := p.refs.Load(); r != 0 || len(p.b) != 0 {
			t.Errorf("packet %d of %d: %d references, %d bytes; want it back in the pool", i, len(all), r, len(p.b))
		}
	}
	t.Logf("%d packets made for %d messages to %d receivers", len(all), messages, len(names))
}
