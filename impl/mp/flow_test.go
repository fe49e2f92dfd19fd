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
// port type and message shape, instead of piling up the difference at the receiver;
// then everything arrives, in order. A message that costs more credit than the window
// still goes through to a reader that reads.
func TestFlowControl(t *testing.T) {
	t.Log(mpitest.Run(t, 0, "^TestFlowControlRank$", 90*time.Second))
}

// Message shapes, as the sizes of the byte arrays written into each message: small
// ones; runs of arrays just under the size that goes in place, gathered into messages
// of their own; and runs that alternate gathered and in-place arrays, whose gathered
// part costs more than the whole window.
var (
	smallShape = []int{8000}
	midShape   = []int{60 << 10, 60 << 10, 60 << 10, 60 << 10, 60 << 10}
	bigShape   = func() []int {
		var s []int
		for range 40 {
			s = append(s, 40<<10, 64<<10)
		}
		return s
	}()
)

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
	n := 0
	port := func() string { n++; return fmt.Sprintf("flow-%d", n) }
	for _, pt := range []ipl.PortType{ringType, gatherType} {
		t.Run("small "+pt.String(), func(t *testing.T) { heldBack(ctx, t, ib, pt, port(), smallShape, 600) })
		t.Run("mid "+pt.String(), func(t *testing.T) { heldBack(ctx, t, ib, pt, port(), midShape, 20) })
		t.Run("big "+pt.String(), func(t *testing.T) {
			sp, rp := flowPorts(ctx, t, ib, pt, port())
			errc := sendShaped(ctx, sp, bigShape, 3, nil)
			readShaped(ctx, t, rp, bigShape, 3)
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// flowPorts connects a new send port to a new receive port of the instance itself.
func flowPorts(ctx context.Context, t *testing.T, ib ipl.Ibis, pt ipl.PortType, name string) (ipl.SendPort, ipl.ReceivePort) {
	rp, err := ib.CreateReceivePort(ctx, pt, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rp.Close() })
	sp, err := ib.CreateSendPort(pt, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sp.Close() })
	if err := sp.Connect(ctx, ib.Identifier(), name); err != nil {
		t.Fatal(err)
	}
	return sp, rp
}

// sendShaped sends count messages of the given shape, numbered in their first array's
// first bytes, from a goroutine of its own; sent hears of each finished message.
func sendShaped(ctx context.Context, sp ipl.SendPort, shape []int, count int, sent chan<- int) <-chan error {
	errc := make(chan error, 1)
	go func() {
		bufs := make([][]byte, len(shape))
		for j, n := range shape {
			bufs[j] = make([]byte, n)
		}
		for i := range count {
			binary.BigEndian.PutUint32(bufs[0], uint32(i))
			m, err := sp.NewMessage(ctx)
			for _, b := range bufs {
				if err == nil {
					err = m.WriteArray(b)
				}
			}
			if err == nil {
				_, err = m.Finish()
			}
			if err != nil {
				errc <- fmt.Errorf("message %d: %w", i, err)
				return
			}
			if sent != nil {
				sent <- i
			}
		}
		errc <- nil
	}()
	return errc
}

// readShaped receives count messages of the given shape and checks their order.
func readShaped(ctx context.Context, t *testing.T, rp ipl.ReceivePort, shape []int, count int) {
	bufs := make([][]byte, len(shape))
	for j, n := range shape {
		bufs[j] = make([]byte, n)
	}
	for i := range count {
		m, err := rp.Receive(ctx)
		if err != nil {
			t.Fatalf("receive %d: %v", i, err)
		}
		for j, b := range bufs {
			if err := m.ReadArray(b); err != nil {
				t.Fatalf("message %d, array %d: %v", i, j, err)
			}
		}
		if got := binary.BigEndian.Uint32(bufs[0]); got != uint32(i) {
			t.Fatalf("message %d carries number %d", i, got)
		}
		if _, err := m.Finish(); err != nil {
			t.Fatal(err)
		}
	}
}

// heldBack sends count messages of the given shape, at least four windows' worth, to a
// port that reads nothing until the sender waits for credit, and checks how far ahead
// the sender got; then the reader takes everything.
func heldBack(ctx context.Context, t *testing.T, ib ipl.Ibis, pt ipl.PortType, name string, shape []int, count int) {
	size := 0
	for _, n := range shape {
		size += n
	}
	if size*count < 4*mp.CreditWindow {
		t.Fatalf("%d messages of %d bytes do not overrun the window of %d four times", count, size, mp.CreditWindow)
	}
	sp, rp := flowPorts(ctx, t, ib, pt, name)
	sent := make(chan int, count)
	errc := sendShaped(ctx, sp, shape, count, sent)
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
	readShaped(ctx, t, rp, shape, count)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
