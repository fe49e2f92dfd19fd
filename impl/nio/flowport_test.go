package nio

import (
	"context"
	"testing"

	"github.com/ibisgo/ibis/ipl"
)

// openWithIn opens an nio instance for port type pt with the options given and creates
// its receive port "in", which the flow, budget, direct-write and posted-read tests
// send to. The instance is closed when the test ends.
func openWithIn(ctx context.Context, t *testing.T, pt ipl.PortType, opts ...ipl.Option) (ipl.Ibis, ipl.ReceivePort) {
	t.Helper()
	ib, err := ipl.New(ctx, append([]ipl.Option{ipl.WithImplementation(Name), ipl.WithPortTypes(pt)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ib.Close() })
	rp, err := ib.CreateReceivePort(ctx, pt, "in")
	if err != nil {
		t.Fatal(err)
	}
	return ib, rp
}

// sendToIn creates a send port of ib named name and connects it to ib's port "in".
func sendToIn(ctx context.Context, t *testing.T, ib ipl.Ibis, pt ipl.PortType, name string) ipl.SendPort {
	t.Helper()
	sp, err := ib.CreateSendPort(pt, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Connect(ctx, ib.Identifier(), "in"); err != nil {
		t.Fatal(err)
	}
	return sp
}
