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
		b.Run(f, func(b *testing.B) { roundTrips(b, f, f, 0) })
	}
}

// BenchmarkArrayRoundTrip: as BenchmarkRoundTrip with a 1 MiB byte array each way (one
// WriteArray, one ReadArray into a reused slice): where a large message's time goes.
//
//	go test -run '^$' -bench ArrayRoundTrip -cpuprofile /tmp/nio.cpu ./impl/nio
func BenchmarkArrayRoundTrip(b *testing.B) {
	for _, f := range [][2]string{{"blocking", "blocking"}, {"blocking", "nonblocking"}, {"nonblocking", "nonblocking"}} {
		b.Run(f[0]+"/"+f[1], func(b *testing.B) { roundTrips(b, f[0], f[1], 1<<20) })
	}
}

// roundTrips times round trips of messages holding one byte array of size bytes (none
// when size is 0) between two instances whose ports have the given flavours.
func roundTrips(b *testing.B, send, receive string, size int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pt := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO)
	open := func() ipl.Ibis {
		ib, err := ipl.New(ctx, ipl.WithImplementation(Name), ipl.WithPortTypes(pt), ipl.WithPool("bench-"+send+"-"+receive),
			ipl.WithProperty(PropertySend, send), ipl.WithProperty(PropertyReceive, receive))
		if err != nil {
			b.Fatal(err)
		}
		return ib
	}
	a, c := open(), open()
	defer a.Close()
	defer c.Close()
	pair := func(ib ipl.Ibis, in string) (ipl.ReceivePort, ipl.SendPort) {
		rp, err := ib.CreateReceivePort(ctx, pt, in)
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
	write := func(sp ipl.SendPort, payload []byte) error {
		w, err := sp.NewMessage(ctx)
		if err != nil {
			return err
		}
		if size > 0 {
			if err := w.WriteArray(payload); err != nil {
				return err
			}
		}
		_, err = w.Finish()
		return err
	}
	take := func(rp ipl.ReceivePort, into []byte) error {
		m, err := rp.Receive(ctx)
		if err != nil {
			return err
		}
		if size > 0 {
			if err := m.ReadArray(into); err != nil {
				return err
			}
		}
		_, err = m.Finish()
		return err
	}
	out, in := make([]byte, size), make([]byte, size)
	hop := func(sp ipl.SendPort, rp ipl.ReceivePort) error {
		if err := write(sp, out); err != nil {
			return err
		}
		return take(rp, in)
	}
	echoed := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		echo := make([]byte, size)
		for {
			if err := take(crp, echo); err != nil {
				echoed <- err
				return
			}
			select {
			case <-stop:
				echoed <- nil
				return
			default:
			}
			if err := write(csp, echo); err != nil {
				echoed <- err
				return
			}
		}
	}()
	b.SetBytes(int64(2 * size))
	b.ResetTimer()
	for b.Loop() {
		if err := hop(asp, arp); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(stop)
	// The last message lets the echo goroutine see stop.
	if err := write(asp, out); err != nil {
		b.Fatal(err)
	}
	if err := <-echoed; err != nil {
		b.Fatal(err)
	}
}
