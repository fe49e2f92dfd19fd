package conformance

import (
	"context"
	"fmt"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

const multicastMessages = 200

// A one-to-many send port: every message reaches every connected receive port, in order;
// both ports' statistics count the messages, their bytes and the connections.
var _ = register(&testCase{
	name:     "multicast",
	children: 3,
	parent: func(e *Env) {
		t := e.T
		sp := multicastSender(e)
		defer sp.Close()
		if got := len(sp.ConnectedTo()); got != len(e.Children) {
			t.Fatalf("ConnectedTo has %d ports, want %d", got, len(e.Children))
		}
		data := make([]float64, 10000)
		var bytes int64
		for i := range multicastMessages {
			m, err := sp.NewMessage(e.Ctx)
			if err != nil {
				t.Fatal(err)
			}
			data[0] = float64(i)
			if err := m.WriteInt32(int32(i)); err != nil {
				t.Fatal(err)
			}
			if i%10 == 0 {
				if err := m.WriteArray(data); err != nil {
					t.Fatal(err)
				}
			}
			n, err := m.Finish()
			if err != nil {
				t.Fatalf("finish message %d: %v", i, err)
			}
			bytes += n
		}
		want := ipl.PortStats{Messages: multicastMessages, Bytes: bytes, ConnectionsMade: int64(len(e.Children))}
		got := sp.Stats()
		// The routes the connections took depend on the network (test/grid checks them).
		got.ConnectionsReversed, got.ConnectionsRelayed = 0, 0
		if got != want {
			t.Errorf("send port stats %+v, want %+v", got, want)
		}
	},
	child: func(e *Env) error {
		rp, err := e.Ibis.CreateReceivePort(e.Ctx, OneToMany, "mc")
		if err != nil {
			return err
		}
		defer rp.Close()
		data := make([]float64, 10000)
		var bytes int64
		for i := range multicastMessages {
			m, err := rp.Receive(e.Ctx)
			if err != nil {
				return err
			}
			v, err := m.ReadInt32()
			if err != nil {
				return err
			}
			if int(v) != i {
				return fmt.Errorf("message %d arrived as number %d", v, i)
			}
			if i%10 == 0 {
				if err := m.ReadArray(data); err != nil {
					return err
				}
				if data[0] != float64(i) {
					return fmt.Errorf("message %d: array holds %g", i, data[0])
				}
			}
			n, err := m.Finish()
			if err != nil {
				return err
			}
			bytes += n
		}
		want := ipl.PortStats{Messages: multicastMessages, Bytes: bytes, ConnectionsMade: 1}
		got := rp.Stats()
		got.ConnectionsClosed = 0 // the sender's close may have been seen already
		got.ConnectionsReversed, got.ConnectionsRelayed = 0, 0
		if got != want {
			return fmt.Errorf("receive port stats %+v, want %+v", rp.Stats(), want)
		}
		// The sender closes its port when it has sent everything: a clean end, which a
		// port read by its caller learns in a Receive (that then times out).
		for rp.Stats().ConnectionsClosed == 0 {
			if e.Ctx.Err() != nil {
				return fmt.Errorf("the sender's close never counted: %+v", rp.Stats())
			}
			ctx, cancel := context.WithTimeout(e.Ctx, 5*time.Millisecond)
			m, err := rp.Receive(ctx)
			cancel()
			if err == nil {
				_, _ = m.Finish()
				return fmt.Errorf("a message after the last one")
			}
		}
		if got := rp.Stats(); got.ConnectionsClosed != 1 || got.ConnectionsLost != 0 {
			return fmt.Errorf("receive port stats after the sender's close %+v", got)
		}
		return nil
	},
})
