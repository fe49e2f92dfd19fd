package core

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"
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
	in, err := Open(ctx, cfg, "pipe", &pipeTransport{push: chunk})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	rp, err := in.CreateReceivePort(pt, "in")
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
