package nio_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/ibisgo/ibis/impl/nio"
	"github.com/ibisgo/ibis/ipl"
)

// Three senders feed one many-to-one port. The port type asks for the thread receive
// flavour (one dedicated event loop reads every connection) and queued, non-blocking
// sends; a program that leaves the flavours out gets nonblocking for both here.
func Example_manyToOne() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pt := ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO, nio.ReceivePortThread, nio.SendPortNonBlocking)
	ibis, err := ipl.New(ctx, ipl.WithImplementation(nio.Name), ipl.WithPortTypes(pt), ipl.WithPool("nio-example"))
	if err != nil {
		log.Fatal(err)
	}
	defer ibis.Close()
	rp, err := ibis.CreateReceivePort(ctx, pt, "sums")
	if err != nil {
		log.Fatal(err)
	}
	for i := range 3 {
		sp, err := ibis.CreateSendPort(pt, fmt.Sprintf("worker-%d", i))
		if err != nil {
			log.Fatal(err)
		}
		if err := sp.Connect(ctx, ibis.Identifier(), "sums"); err != nil {
			log.Fatal(err)
		}
		w, err := sp.NewMessage(ctx)
		if err != nil {
			log.Fatal(err)
		}
		_ = w.WriteArray([]int64{int64(i), int64(10 * i)})
		if _, err := w.Finish(); err != nil { // written to the socket when Finish returns
			log.Fatal(err)
		}
	}
	total := int64(0)
	for range 3 {
		m, err := rp.Receive(ctx)
		if err != nil {
			log.Fatal(err)
		}
		v := make([]int64, 2)
		_ = m.ReadArray(v)
		_, _ = m.Finish()
		total += v[0] + v[1]
	}
	fmt.Println("total", total)
	// Output: total 33
}
