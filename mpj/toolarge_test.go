package mpj_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/mpj"
)

// A Send over the message limit fails at the sender with ErrTooLarge and sends nothing:
// the receiver, whose dispatcher a header without its data broke for good, takes the
// next message as if the big one had never been tried.
func TestSendOverLimitSendsNothing(t *testing.T) {
	ibs := pairOfIbises(t, ipl.WithMaxMessageSize(64<<10))
	ws, errs := initBoth(t, ibs, []mpj.Option{mpj.WithRank(0)}, []mpj.Option{mpj.WithRank(1)})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ws[0].Send(ctx, make([]float64, 20000), 1, 7); !errors.Is(err, ipl.ErrTooLarge) {
		t.Errorf("a Send of 160 KB with a limit of 64 KiB: %v, want ErrTooLarge", err)
	}
	if err := ws[0].Send(ctx, []float64{1, 2, 3}, 1, 8); err != nil {
		t.Fatalf("the Send after it: %v", err)
	}
	got := make([]float64, 3)
	if _, err := ws[1].Recv(ctx, got, 0, mpj.AnyTag); err != nil || got[2] != 3 {
		t.Errorf("the receiver: %v, %v; want [1 2 3]", got, err)
	}
}

// A Send of rows ([][]float64, 16 MB) over a 4 MiB limit: its first rows go out before
// a later row is refused, so the receiver gets the message cut short (the sender's
// Cancel ends it). The receive that takes it (tag 7), posted before it came or after,
// fails, and the world goes on: the next message arrives. Its dispatcher failed for
// good before.
func TestSendOfRowsOverLimitFailsOnlyItsReceive(t *testing.T) {
	ibs := pairOfIbises(t, ipl.WithMaxMessageSize(4<<20))
	ws, errs := initBoth(t, ibs, []mpj.Option{mpj.WithRank(0)}, []mpj.Option{mpj.WithRank(1)})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows := make([][]float64, 2000)
	for i := range rows {
		rows[i] = make([]float64, 1024)
	}
	// Taken after it came (queued) or posted before (read into the buffer): the receive
	// of tag 7 fails either way, and the next message arrives.
	for _, posted := range []bool{false, true} {
		var req *mpj.Request
		if posted {
			var err error
			if req, err = ws[1].Irecv(rows, 0, 7); err != nil {
				t.Fatal(err)
			}
		}
		if err := ws[0].Send(ctx, rows, 1, 7); !errors.Is(err, ipl.ErrTooLarge) {
			t.Errorf("posted %v: a Send of 16 MB in rows with a limit of 4 MiB: %v, want ErrTooLarge", posted, err)
		}
		if err := ws[0].Send(ctx, []float64{1, 2, 3}, 1, 8); err != nil {
			t.Fatalf("posted %v: the Send after it: %v", posted, err)
		}
		var err error
		if posted {
			_, err = req.Wait(ctx)
		} else {
			_, err = ws[1].Recv(ctx, rows, 0, 7)
		}
		if !errors.Is(err, ipl.ErrTypeMismatch) {
			t.Errorf("posted %v: the receive of the message cut short: %v, want ErrTypeMismatch", posted, err)
		}
		got := make([]float64, 3)
		if _, err := ws[1].Recv(ctx, got, 0, 8); err != nil || got[2] != 3 {
			t.Errorf("posted %v: the receiver: %v, %v; want [1 2 3]", posted, got, err)
		}
	}
}
