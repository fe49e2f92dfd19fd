package ipl_test

import (
	"context"
	"fmt"
	"log"
	"time"

	_ "github.com/ibisgo/ibis/impl/tcp" // link in an implementation
	"github.com/ibisgo/ibis/ipl"
)

// A pool of one process (with an embedded registry) that sends a message to itself:
// the whole life of a message, from port types to Finish.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pt := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationObject,
		ipl.ReceiveExplicit, ipl.CommunicationReliable, ipl.CommunicationFIFO)
	ibis, err := ipl.New(ctx, ipl.WithPortTypes(pt), ipl.WithPool("example"))
	if err != nil {
		log.Fatal(err)
	}
	defer ibis.Close()

	rp, err := ibis.CreateReceivePort(ctx, pt, "inbox")
	if err != nil {
		log.Fatal(err)
	}
	sp, err := ibis.CreateSendPort(pt, "outbox")
	if err != nil {
		log.Fatal(err)
	}
	if err := sp.Connect(ctx, ibis.Identifier(), "inbox"); err != nil {
		log.Fatal(err)
	}

	w, err := sp.NewMessage(ctx)
	if err != nil {
		log.Fatal(err)
	}
	_ = w.WriteString("temperatures")
	_ = w.WriteArray([]float64{21.5, 22.0, 19.75})
	_ = w.WriteObject(map[string]int{"station": 7})
	if _, err := w.Finish(); err != nil {
		log.Fatal(err)
	}

	r, err := rp.Receive(ctx)
	if err != nil {
		log.Fatal(err)
	}
	label, _ := r.ReadString()
	values := make([]float64, 3)
	_ = r.ReadArray(values)
	var meta map[string]int
	_ = r.ReadObject(&meta)
	if _, err := r.Finish(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(label, values, meta["station"], "from", r.Origin().Name)
	// Output: temperatures [21.5 22 19.75] 7 from outbox
}

// Message upcalls: the handler owns each message until it returns.
func ExampleWithMessageHandler() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pt := ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData,
		ipl.ReceiveAutoUpcalls, ipl.CommunicationReliable, ipl.CommunicationFIFO)
	ibis, err := ipl.New(ctx, ipl.WithPortTypes(pt))
	if err != nil {
		log.Fatal(err)
	}
	defer ibis.Close()

	got := make(chan int64)
	rp, err := ibis.CreateReceivePort(ctx, pt, "counter", ipl.WithMessageHandler(func(m ipl.ReadMessage) error {
		v, err := m.ReadInt64()
		got <- v
		return err
	}))
	if err != nil {
		log.Fatal(err)
	}
	if err := rp.EnableMessageUpcalls(); err != nil {
		log.Fatal(err)
	}
	sp, _ := ibis.CreateSendPort(pt, "")
	if err := sp.Connect(ctx, ibis.Identifier(), "counter"); err != nil {
		log.Fatal(err)
	}
	for i := int64(1); i <= 3; i++ {
		w, _ := sp.NewMessage(ctx)
		_ = w.WriteInt64(i * i)
		if _, err := w.Finish(); err != nil {
			log.Fatal(err)
		}
		fmt.Println(<-got)
	}
	// Output:
	// 1
	// 4
	// 9
}
