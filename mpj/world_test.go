package mpj_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/mpj"
	"github.com/ibisgo/ibis/registry"
)

// pairOfIbises starts two Ibis instances in this process, in one closed pool of two,
// each with opts too.
func pairOfIbises(t *testing.T, opts ...ipl.Option) []ipl.Ibis {
	t.Helper()
	srv, err := registry.StartEmbedded("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ibs := make([]ipl.Ibis, 2)
	for i := range ibs {
		ib, err := ipl.New(ctx, append([]ipl.Option{ipl.WithImplementation("tcp"), ipl.WithRegistry(srv.Addr()),
			ipl.WithPool(t.Name()), ipl.WithPoolSize(2), ipl.WithPortTypes(mpj.PortTypes()...)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ib.Close() })
		ibs[i] = ib
	}
	return ibs
}

// initBoth calls Init on both instances at once, with the given options each.
func initBoth(t *testing.T, ibs []ipl.Ibis, opts ...[]mpj.Option) ([]*mpj.World, []error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws := make([]*mpj.World, len(ibs))
	errs := make([]error, len(ibs))
	var wg sync.WaitGroup
	for i, ib := range ibs {
		wg.Go(func() { ws[i], errs[i] = mpj.Init(ctx, ib, opts[i]...) })
	}
	wg.Wait()
	for _, w := range ws {
		if w != nil {
			t.Cleanup(func() { _ = w.Close() })
		}
	}
	return ws, errs
}

func TestRanksFollowJoinOrder(t *testing.T) {
	t.Setenv("IBIS_RANK", "")
	ibs := pairOfIbises(t)
	ws, errs := initBoth(t, ibs, nil, nil)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Init %d: %v", i, err)
		}
		want := 0
		if ibs[i].Identifier().Number() > ibs[1-i].Identifier().Number() {
			want = 1
		}
		if ws[i].Rank() != want || ws[i].Size() != 2 {
			t.Errorf("instance %d (join number %d): rank %d of %d, want %d of 2",
				i, ibs[i].Identifier().Number(), ws[i].Rank(), ws[i].Size(), want)
		}
	}
}

func TestRanksFollowWithRank(t *testing.T) {
	ibs := pairOfIbises(t)
	ws, errs := initBoth(t, ibs, []mpj.Option{mpj.WithRank(1)}, []mpj.Option{mpj.WithRank(0)})
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if ws[0].Rank() != 1 || ws[1].Rank() != 0 {
		t.Errorf("ranks %d, %d; want 1, 0", ws[0].Rank(), ws[1].Rank())
	}
}

func TestRanksInconsistent(t *testing.T) {
	t.Setenv("IBIS_RANK", "")
	for name, opts := range map[string][][]mpj.Option{
		"duplicate": {{mpj.WithRank(0)}, {mpj.WithRank(0)}},
		"partial":   {{mpj.WithRank(0)}, nil},
		"too large": {{mpj.WithRank(0)}, {mpj.WithRank(2)}},
	} {
		t.Run(name, func(t *testing.T) {
			_, errs := initBoth(t, pairOfIbises(t), opts...)
			for i, err := range errs {
				if !errors.Is(err, mpj.ErrRanks) {
					t.Errorf("Init %d: %v, want ErrRanks", i, err)
				}
			}
		})
	}
}

func TestInitOpenPool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ib, err := ipl.New(ctx, ipl.WithImplementation("tcp"), ipl.WithPool(t.Name()), ipl.WithPortTypes(mpj.PortTypes()...))
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Close()
	if _, err := mpj.Init(ctx, ib); !errors.Is(err, mpj.ErrOpenPool) {
		t.Fatalf("Init on an open pool: %v, want ErrOpenPool", err)
	}
}

// A world that closes while a receive waits ends the receive with ipl.ErrClosed.
func TestCloseEndsPendingReceive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := mpj.New(ctx, ipl.WithImplementation("tcp"), ipl.WithPool(t.Name()), ipl.WithPoolSize(1))
	if err != nil {
		t.Fatal(err)
	}
	r, err := w.Irecv(make([]byte, 1), mpj.AnySource, mpj.AnyTag)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Wait(ctx); !errors.Is(err, ipl.ErrClosed) {
		t.Fatalf("pending receive after Close: %v, want ErrClosed", err)
	}
	if err := w.Send(ctx, nil, 0, 0); !errors.Is(err, ipl.ErrClosed) {
		t.Fatalf("Send after Close: %v, want ErrClosed", err)
	}
}

// worldOfOne is a World of this process alone (tcp, its own registry) for the length of
// the test, with a context that bounds the test's calls.
func worldOfOne(t *testing.T) (context.Context, *mpj.World) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	w, err := mpj.New(ctx, ipl.WithImplementation("tcp"), ipl.WithPool(t.Name()), ipl.WithPoolSize(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return ctx, w
}
