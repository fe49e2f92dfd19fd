package tcp

import (
	"context"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// BenchmarkUpcallRoundTrip: an empty message there and back between two instances of
// one process, answered from a message handler. "finish-after" lets the handler
// return with its message (the dispatcher goes on with the next); "finish-early"
// finishes it first, so that every message starts a new dispatcher goroutine: the
// cost of the instance's goroutine tracking per upcall.
//
//	go test -run '^$' -bench UpcallRoundTrip ./impl/tcp
func BenchmarkUpcallRoundTrip(b *testing.B) {
	for _, early := range []bool{false, true} {
		name := "finish-after"
		if early {
			name = "finish-early"
		}
		b.Run(name, func(b *testing.B) { upcallRoundTrips(b, early) })
	}
}

func upcallRoundTrips(b *testing.B, early bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	explicit := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO)
	upcalls := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveAutoUpcalls,
		ipl.CommunicationReliable, ipl.CommunicationFIFO)
	pool := "bench-upcall-" + time.Now().Format("150405.000000000")
	open := func() ipl.Ibis {
		ib, err := ipl.New(ctx, ipl.WithImplementation(Name), ipl.WithPortTypes(explicit, upcalls), ipl.WithPool(pool))
		if err != nil {
			b.Fatal(err)
		}
		return ib
	}
	a, c := open(), open()
	defer a.Close()
	defer c.Close()
	arp, err := a.CreateReceivePort(b.Context(), explicit, "a-in")
	if err != nil {
		b.Fatal(err)
	}
	asp, err := a.CreateSendPort(upcalls, "")
	if err != nil {
		b.Fatal(err)
	}
	csp, err := c.CreateSendPort(explicit, "")
	if err != nil {
		b.Fatal(err)
	}
	failed := make(chan error, 1)
	crp, err := c.CreateReceivePort(b.Context(), upcalls, "c-in", ipl.WithMessageHandler(func(m ipl.ReadMessage) error {
		if early {
			if _, err := m.Finish(); err != nil {
				return err
			}
		}
		w, err := csp.NewMessage(ctx)
		if err == nil {
			_, err = w.Finish()
		}
		if err != nil {
			select {
			case failed <- err:
			default:
			}
		}
		return err
	}))
	if err != nil {
		b.Fatal(err)
	}
	if err := asp.Connect(ctx, c.Identifier(), "c-in"); err != nil {
		b.Fatal(err)
	}
	if err := csp.Connect(ctx, a.Identifier(), "a-in"); err != nil {
		b.Fatal(err)
	}
	if err := crp.EnableMessageUpcalls(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		w, err := asp.NewMessage(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Finish(); err != nil {
			b.Fatal(err)
		}
		m, err := arp.Receive(ctx)
		if err != nil {
			select {
			case herr := <-failed:
				b.Fatal(herr)
			default:
			}
			b.Fatal(err)
		}
		if _, err := m.Finish(); err != nil {
			b.Fatal(err)
		}
	}
}
