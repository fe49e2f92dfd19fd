package nio

import (
	"context"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// BenchmarkRoundTrip: an empty message there and back between two instances of one
// process, per flavour pair (send/receive on both sides). In one process the
// goroutines share the scheduler, so this shows where a flavour's time goes (with
// -cpuprofile or -trace), not the cross-process figures of ibis-bench latency.
//
//	go test -run '^$' -bench RoundTrip -trace /tmp/nio.trace ./impl/nio
func BenchmarkRoundTrip(b *testing.B) {
	for _, f := range []string{"blocking", "nonblocking", "thread"} {
		b.Run(f, func(b *testing.B) { roundTrips(b, f) })
	}
}

func roundTrips(b *testing.B, flavour string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pt := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO)
	open := func() ipl.Ibis {
		ib, err := ipl.New(ctx, ipl.WithImplementation(Name), ipl.WithPortTypes(pt), ipl.WithPool("bench-"+flavour),
			ipl.WithProperty(PropertySend, flavour), ipl.WithProperty(PropertyReceive, flavour))
		if err != nil {
			b.Fatal(err)
		}
		return ib
	}
	a, c := open(), open()
	defer a.Close()
	defer c.Close()
	pair := func(ib ipl.Ibis, in string) (ipl.ReceivePort, ipl.SendPort) {
		rp, err := ib.CreateReceivePort(pt, in)
		if err != nil {
			b.Fatal(err)
		}
		sp, err := ib.CreateSendPort(pt, "")
		if err != nil {
			b.Fatal(err)
		}
		return rp, sp
	}
	arp, asp := pair(a, "a-in")
	crp, csp := pair(c, "c-in")
	if err := asp.Connect(ctx, c.Identifier(), "c-in"); err != nil {
		b.Fatal(err)
	}
	if err := csp.Connect(ctx, a.Identifier(), "a-in"); err != nil {
		b.Fatal(err)
	}
	hop := func(sp ipl.SendPort, rp ipl.ReceivePort) error {
		w, err := sp.NewMessage(ctx)
		if err != nil {
			return err
		}
		if _, err := w.Finish(); err != nil {
			return err
		}
		m, err := rp.Receive(ctx)
		if err != nil {
			return err
		}
		_, err = m.Finish()
		return err
	}
	echoed := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		for {
			m, err := crp.Receive(ctx)
			if err != nil {
				echoed <- err
				return
			}
			if _, err := m.Finish(); err != nil {
				echoed <- err
				return
			}
			select {
			case <-stop:
				echoed <- nil
				return
			default:
			}
			w, err := csp.NewMessage(ctx)
			if err == nil {
				_, err = w.Finish()
			}
			if err != nil {
				echoed <- err
				return
			}
		}
	}()
	b.ResetTimer()
	for b.Loop() {
		if err := hop(asp, arp); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(stop)
	w, err := asp.NewMessage(ctx) // the last message lets the echo goroutine see stop
	if err == nil {
		_, err = w.Finish()
	}
	if err != nil {
		b.Fatal(err)
	}
	if err := <-echoed; err != nil {
		b.Fatal(err)
	}
}
