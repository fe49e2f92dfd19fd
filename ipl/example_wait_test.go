package ipl_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// A message handler that ends its own Ibis when told to stop: Close does not wait for
// the handler it is called from, and Wait, called outside, returns once that handler
// (and everything else of the Ibis) has ended.
func ExampleIbis_Wait() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pt := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData,
		ipl.ReceiveAutoUpcalls, ipl.CommunicationReliable, ipl.CommunicationFIFO)
	ibis, err := ipl.New(ctx, ipl.WithPortTypes(pt), ipl.WithPool("example-wait"))
	if err != nil {
		log.Fatal(err)
	}
	rp, err := ibis.CreateReceivePort(ctx, pt, "control", ipl.WithMessageHandler(func(m ipl.ReadMessage) error {
		cmd, err := m.ReadString()
		if err != nil {
			return err
		}
		fmt.Println("handler got", cmd)
		if cmd == "stop" {
			_ = ibis.Close() // from the handler: returns without waiting for it
			fmt.Println("closed from the handler")
		}
		return nil
	}))
	if err != nil {
		log.Fatal(err)
	}
	if err := rp.EnableMessageUpcalls(); err != nil {
		log.Fatal(err)
	}
	sp, _ := ibis.CreateSendPort(pt, "")
	if err := sp.Connect(ctx, ibis.Identifier(), "control"); err != nil {
		log.Fatal(err)
	}
	w, _ := sp.NewMessage(ctx)
	_ = w.WriteString("stop")
	// Finish may see the Ibis closed already: the handler can be quicker.
	_, _ = w.Finish()
	// Wait returns once the handler has returned: nothing of the Ibis is left.
	if err := ibis.Wait(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("ended")
	// Output:
	// handler got stop
	// closed from the handler
	// ended
}
