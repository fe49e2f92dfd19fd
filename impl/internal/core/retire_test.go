package core

import (
	"bytes"
	"testing"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/fifo"
)

type nopIn struct{}

func (nopIn) Close() error { return nil }

// Bytes the event loop pushes after the inbox was retired (bad data, goodbye, fatal)
// but before the transport reports the end are dropped: they must not count against
// the port's budget for good.
func TestRetiredInboxDropsLateBytes(t *testing.T) {
	p := &ReceivePort{in: &Instance{}, closed: make(chan struct{}), log: zap.NewNop(), push: pushQueue{pending: fifo.New[*Inbox]()}}
	ic := &inConn{port: p, c: nopIn{}, watch: &stallWatch{}}
	p.conns = []*inConn{ic}
	b := &Inbox{port: p, ic: ic, wake: make(chan struct{}, 1)}
	ic.setDelivery(b)
	b.Push(bytes.Repeat([]byte{0xff}, 64)) // not a packet header: retired at once
	if got := p.push.buffered.Load(); got != 0 {
		t.Fatalf("after retire: buffered %d", got)
	}
	b.Push(make([]byte, 64<<10)) // the event loop's next read, before its close runs
	b.End(nil)
	if got := p.push.buffered.Load(); got != 0 {
		t.Fatalf("the port budget still counts %d bytes of a retired, ended inbox", got)
	}
}
