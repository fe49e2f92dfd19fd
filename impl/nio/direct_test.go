package nio

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// TestDirectWritesKeepOrder: a nonblocking send port writes on the caller's goroutine
// while nothing is queued and queues the rest when the socket is full; small and large
// messages (far beyond the socket buffers, to a receiver that reads slowly) all arrive,
// in order, intact, on every receive flavour.
func TestDirectWritesKeepOrder(t *testing.T) {
	for _, recv := range []string{"blocking", "nonblocking", "thread"} {
		t.Run(recv, func(t *testing.T) { directOrder(t, recv) })
	}
}

func directOrder(t *testing.T, recv string) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	pt := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO)
	seen := withHooks(t)
	ib, rp := openWithIn(ctx, t, pt, ipl.WithProperty(PropertySend, "nonblocking"), ipl.WithProperty(PropertyReceive, recv),
		ipl.WithMaxMessageSize(64<<20))
	sp := sendToIn(ctx, t, ib, pt, "")
	sizes := []int{0, 1, 100, 1 << 20, 8, 4 << 20, 3, 1 << 16} // int32s: up to 16 MiB
	for range 24 {
		sizes = append(sizes, 200_000) // 800 KB: pieces whose rests go back to the packet pool
	}
	sent := make(chan error, 1)
	go func() {
		for i, n := range sizes {
			data := make([]int32, n)
			for k := range data {
				data[k] = int32(i + k)
			}
			m, err := sp.NewMessage(ctx)
			if err == nil {
				err = m.WriteInt(i)
			}
			if err == nil {
				err = m.WriteArray(data)
			}
			if m != nil {
				if _, ferr := m.Finish(); err == nil {
					err = ferr
				}
			}
			if err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	for i, n := range sizes {
		m, err := rp.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := m.ReadInt()
		data := make([]int32, n)
		if err := m.ReadArray(data); err != nil {
			t.Fatalf("message %d (read %d): %v", i, got, err)
		}
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
		if got != i {
			t.Fatalf("message %d arrived as number %d", i, got)
		}
		for k, v := range data {
			if v != int32(i+k) {
				t.Fatalf("message %d: element %d is %d", i, k, v)
			}
		}
		time.Sleep(time.Millisecond) // a slow receiver, so the socket fills (not needed to pass)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if seen.direct.Load() == 0 {
		t.Fatalf("no packet was written by its sender")
	}
	t.Logf("%d direct writes, %d left a rest to the event loop", seen.direct.Load(), seen.rests.Load())
}

// TestDirectWritesCopyOnlyTheRest: a message to one connection is written from the
// program's own slice while nothing is queued; only what the socket does not take is
// copied into packets for the event loop, so a run of large arrays to a receiver that
// keeps up is copied in part, not whole, and arrives intact.
func TestDirectWritesCopyOnlyTheRest(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pt := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO)
	seen := withHooks(t)
	ib, rp := openWithIn(ctx, t, pt, ipl.WithProperty(PropertySend, "nonblocking"), ipl.WithProperty(PropertyReceive, "blocking"))
	sp := sendToIn(ctx, t, ib, pt, "")
	const messages, size = 8, 1 << 20
	received := make(chan error, 1)
	go func() {
		got := make([]byte, size)
		for i := range messages {
			m, err := rp.Receive(ctx)
			if err == nil {
				err = m.ReadArray(got)
			}
			if err == nil {
				_, err = m.Finish()
			}
			for k := 0; err == nil && k < size; k++ {
				if got[k] != byte(i+k) {
					err = fmt.Errorf("message %d: byte %d is %d", i, k, got[k])
				}
			}
			if err != nil {
				received <- err
				return
			}
		}
		received <- nil
	}()
	data := make([]byte, size)
	for i := range messages {
		for k := range data {
			data[k] = byte(i + k)
		}
		m, err := sp.NewMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_ = m.WriteArray(data)
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-received; err != nil {
		t.Fatal(err)
	}
	copied := seen.copied.Load()
	if copied >= messages*size {
		t.Fatalf("%d bytes copied into packets for %d sent: every byte was copied", copied, messages*size)
	}
	t.Logf("%d of %d bytes copied for the event loop", copied, messages*size)
}
