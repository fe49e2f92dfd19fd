package core

import (
	"errors"
	"fmt"
	"testing"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"
)

// A receive port whose type lacks connection.downcalls keeps no lists of new and lost
// connections: nobody could ever take them, so they would only grow with every sender
// that comes and goes. With the capability, the lists are kept for the program.
func TestConnectionListsOnlyWithDowncalls(t *testing.T) {
	for _, downcalls := range []bool{false, true} {
		caps := []string{ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveExplicit,
			ipl.CommunicationReliable, ipl.CommunicationFIFO}
		if downcalls {
			caps = append(caps, ipl.ConnectionDowncalls)
		}
		pt := ipl.MustPortType(caps...)
		in := &Instance{cfg: &ipl.Config{MaxMessageSize: 1 << 20}, log: zap.NewNop()}
		p := newReceivePort(in, pt, "in", ipl.ReceivePortConfig{})
		const senders = 100
		for i := range senders {
			from := ipl.SendPortIdentifier{Ibis: ipl.IbisIdentifier{ID: "x", Pool: "p"}, Name: fmt.Sprintf("s%d", i)}
			rep, acc := p.accept(&Request{From: from, To: "in", PortType: pt.String()}, nopIn{})
			if acc == nil {
				t.Fatalf("sender %d refused: %+v", i, rep)
			}
			p.connEnded(acc.ic, errors.New("gone"))
		}
		p.mu.Lock()
		nNew, nLost := len(p.newConns), len(p.lostConns)
		p.mu.Unlock()
		want := 0
		if downcalls {
			want = senders
		}
		if nNew != want || nLost != want {
			t.Errorf("downcalls=%v: %d new and %d lost kept, want %d each", downcalls, nNew, nLost, want)
		}
	}
}

// nopIn is an incoming connection that holds nothing.
type nopIn struct{}

func (nopIn) Close() error { return nil }
