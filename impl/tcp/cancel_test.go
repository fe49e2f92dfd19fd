package tcp

import (
	"context"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// A message cancelled before any of it went out gives its number back: on a numbered
// port the receiver sees 0, 1, 2 with no gap, and the message after the cancelled one
// has the cancelled one's number.
func TestCancelGivesItsNumberBack(t *testing.T) {
	numbered := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit,
		ipl.CommunicationReliable, ipl.CommunicationFIFO, ipl.CommunicationNumbered)
	ib := newTestIbis(t, ipl.WithPortTypes(numbered))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rp, err := ib.CreateReceivePort(ctx, numbered, "in")
	if err != nil {
		t.Fatal(err)
	}
	sp, _ := ib.CreateSendPort(numbered, "")
	if err := sp.Connect(ctx, ib.Identifier(), "in"); err != nil {
		t.Fatal(err)
	}
	for i, cancelIt := range []bool{false, true, false, true, true, false} {
		m, err := sp.NewMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_ = m.WriteInt64(int64(i))
		if cancelIt {
			err = m.Cancel()
		} else {
			_, err = m.Finish()
		}
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	for want := range int64(3) {
		m, err := rp.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.SequenceNumber(); got != want {
			t.Errorf("message %d arrived numbered %d", want, got)
		}
		_, _ = m.Finish()
	}
}
