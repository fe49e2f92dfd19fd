//go:build mpi

package mp_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/ibisgo/ibis/impl/mp"
	"github.com/ibisgo/ibis/impl/mp/internal/mpitest"
	"github.com/ibisgo/ibis/ipl"
)

// A sender that outpaces its reader is held back once it is a window ahead, for every
// port type, instead of piling up the difference at the receiver; then everything
// arrives, in order.
func TestFlowControl(t *testing.T) {
	t.Log(mpitest.Run(t, 0, "^TestFlowControlRank$", 90*time.Second))
}

func TestFlowControlRank(t *testing.T) {
	if _, ok := mpitest.Rank(); !ok {
		t.Skip("runs as an MPI singleton of TestFlowControl")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ib, err := ipl.New(ctx, ipl.WithImplementation(mp.Name), ipl.WithPortTypes(ringType, gatherType))
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Close()
	for i, pt := range []ipl.PortType{ringType, gatherType} {
		t.Run(pt.String(), func(t *testing.T) { flowOnce(ctx, t, ib, pt, fmt.Sprintf("flow-%d", i)) })
	}
}

func flowOnce(ctx context.Context, t *testing.T, ib ipl.Ibis, pt ipl.PortType, name string) {
	const size, count = 8000, 500 // 4 MB in messages that go eagerly
	rp, err := ib.CreateReceivePort(pt, name)
	if err != nil {
		t.Fatal(err)
	}
	defer rp.Close()
	sp, err := ib.CreateSendPort(pt, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if err := sp.Connect(ctx, ib.Identifier(), name); err != nil {
		t.Fatal(err)
	}
	sent := make(chan int, count)
	errc := make(chan error, 1)
	go func() {
		buf := make([]byte, size)
		for i := range count {
			binary.BigEndian.PutUint32(buf, uint32(i))
			m, err := sp.NewMessage(ctx)
			if err == nil {
				if err = m.WriteArray(buf); err == nil {
					_, err = m.Finish()
				}
			}
			if err != nil {
				errc <- fmt.Errorf("message %d: %w", i, err)
				return
			}
			sent <- i
		}
		errc <- nil
	}()
	// Nothing is read until the sender waits for credit.
	for mp.WaitingForCredit() == 0 {
		select {
		case err := <-errc:
			t.Fatalf("the sender sent all %d messages of %d bytes to a reader that read none: %v", count, size, err)
		case <-ctx.Done():
			t.Fatalf("the sender neither finished nor waited for credit: %v", ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
	ahead := len(sent)
	t.Logf("the sender waits after %d messages (%d bytes)", ahead, ahead*size)
	// One message more than the window may be on its way in core's receive path.
	if limit := mp.CreditWindow/size + 2; ahead > limit {
		t.Errorf("the sender ran %d messages ahead of its reader, more than %d", ahead, limit)
	}
	buf := make([]byte, size)
	for i := range count {
		m, err := rp.Receive(ctx)
		if err != nil {
			t.Fatalf("receive %d: %v", i, err)
		}
		if err := m.ReadArray(buf); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		if got := binary.BigEndian.Uint32(buf); got != uint32(i) {
			t.Fatalf("message %d carries number %d", i, got)
		}
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
