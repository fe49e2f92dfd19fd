package ipl_test

import (
	"context"
	"fmt"
	"log"
	"slices"
	"sync"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// Concurrent upcalls: two senders' messages are in their handlers at the same time.
// Each handler waits until the other has come in, which one upcall at a time never
// allows.
func ExampleWithConcurrentUpcalls() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pt := ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData,
		ipl.ReceiveAutoUpcalls, ipl.CommunicationReliable, ipl.CommunicationFIFO)
	ibis, err := ipl.New(ctx, ipl.WithPortTypes(pt))
	if err != nil {
		log.Fatal(err)
	}
	defer ibis.Close()

	var arrived sync.WaitGroup
	arrived.Add(2)
	bothIn := make(chan struct{})
	go func() { arrived.Wait(); close(bothIn) }()
	got := make(chan int64, 2)
	rp, err := ibis.CreateReceivePort(ctx, pt, "server", ipl.WithConcurrentUpcalls(2),
		ipl.WithMessageHandler(func(m ipl.ReadMessage) error {
			v, err := m.ReadInt64()
			arrived.Done()
			select {
			case <-bothIn: // the other sender's handler runs too
			case <-ctx.Done():
				return ctx.Err()
			}
			got <- v
			return err
		}))
	if err != nil {
		log.Fatal(err)
	}
	if err := rp.EnableMessageUpcalls(); err != nil {
		log.Fatal(err)
	}
	for i := int64(1); i <= 2; i++ {
		sp, _ := ibis.CreateSendPort(pt, "")
		if err := sp.Connect(ctx, ibis.Identifier(), "server"); err != nil {
			log.Fatal(err)
		}
		w, _ := sp.NewMessage(ctx)
		_ = w.WriteInt64(i * 10)
		if _, err := w.Finish(); err != nil {
			log.Fatal(err)
		}
	}
	var values []int64
	for range 2 {
		select {
		case v := <-got:
			values = append(values, v)
		case <-ctx.Done():
			log.Fatal("the handlers never ran together")
		}
	}
	slices.Sort(values)
	fmt.Println(values)
	// Output: [10 20]
}
