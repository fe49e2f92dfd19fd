package inbox

import (
	"bytes"
	"testing"
)

// Bytes the event loop pushes after the inbox was retired (bad data, goodbye, fatal)
// but before the transport reports the end are dropped: they must not count against
// the port's budget for good.
func TestRetiredInboxDropsLateBytes(t *testing.T) {
	b := bareInbox()
	b.Push(bytes.Repeat([]byte{0xff}, 64)) // not a packet header: retired at once
	if got := b.q.buffered.Load(); got != 0 {
		t.Fatalf("after retire: buffered %d", got)
	}
	b.Push(make([]byte, 64<<10)) // the event loop's next read, before its close runs
	b.End(nil)
	if got := b.q.buffered.Load(); got != 0 {
		t.Fatalf("the port budget still counts %d bytes of a retired, ended inbox", got)
	}
}
