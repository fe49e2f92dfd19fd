package core

import (
	"fmt"
	"testing"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/ipl"
)

// fakeSource is a transport's own source that never has a message.
type fakeSource struct{}

func (fakeSource) Take() *Acceptance     { return nil }
func (fakeSource) Wake() <-chan struct{} { return nil }

// TestSourceChosenByCapabilities: a port's one message source follows from its type and
// what the transport declares, and nothing else.
func TestSourceChosenByCapabilities(t *testing.T) {
	direct := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit)
	polled := ipl.MustPortType(ipl.ConnectionOneToOne, ipl.SerializationData, ipl.ReceiveExplicit, ipl.ReceivePoll)
	manyToOne := ipl.MustPortType(ipl.ConnectionManyToOne, ipl.SerializationData, ipl.ReceiveExplicit)
	own := func(ipl.PortType) Source { return fakeSource{} }
	for _, c := range []struct {
		name string
		pt   ipl.PortType
		caps Capabilities
		want string
	}{
		{"streams only", direct, Capabilities{}, "*core.streamSource"},
		{"direct reads", direct, Capabilities{DirectReads: true}, "*core.directSource"},
		{"direct reads, polled type", polled, Capabilities{DirectReads: true}, "*core.streamSource"},
		{"direct reads, many-to-one", manyToOne, Capabilities{DirectReads: true}, "*core.streamSource"},
		{"own source", direct, Capabilities{DirectReads: true, Source: own}, "*core.pushedSource"},
		{"own source declined", direct, Capabilities{DirectReads: true, Source: func(ipl.PortType) Source { return nil }}, "*core.directSource"},
	} {
		in := &Instance{cfg: &ipl.Config{}, log: zap.NewNop(), caps: c.caps}
		p := newReceivePort(in, c.pt, "in", ipl.ReceivePortConfig{})
		if got := fmt.Sprintf("%T", p.src); got != c.want {
			t.Errorf("%s: source %s, want %s", c.name, got, c.want)
		}
	}
}
