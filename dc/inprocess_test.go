package dc_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibisgo/ibis/dc"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"

	_ "github.com/ibisgo/ibis/impl/nio"
	_ "github.com/ibisgo/ibis/impl/tcp"
)

// localPool starts p Ibis instances of impl in this process, in one pool, with a dc
// runtime each.
func localPool(t testing.TB, impl string, p int, opts ...dc.Option) []*dc.Runtime {
	t.Helper()
	return localPoolWith(t, impl, p, nil, opts...)
}

// localPoolWith is localPool with more options for every Ibis.
func localPoolWith(t testing.TB, impl string, p int, ibisOpts []ipl.Option, opts ...dc.Option) []*dc.Runtime {
	t.Helper()
	srv, err := registry.StartEmbedded("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rts := make([]*dc.Runtime, p)
	for i := range rts {
		ib, err := ipl.New(ctx, append(append(dc.IbisOptions(), ipl.WithImplementation(impl), ipl.WithRegistry(srv.Addr()),
			ipl.WithPool(t.Name()), ipl.WithTag(fmt.Sprintf("site%d", i%2))), ibisOpts...)...)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := dc.New(ctx, ib, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := rt.Close(); err != nil {
				t.Errorf("closing the runtime: %v", err)
			}
			_ = ib.Close()
		})
		rts[i] = rt
	}
	return rts
}

// runAll runs k(arg) on every runtime at once and returns the results.
func runAll[A, R any](t *testing.T, rts []*dc.Runtime, k *dc.Kind[A, R], arg A) []R {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res := make([]R, len(rts))
	errs := make([]error, len(rts))
	var wg sync.WaitGroup
	for i, rt := range rts {
		wg.Go(func() { res[i], errs[i] = dc.Run(ctx, rt, k, arg) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	return res
}

func TestFibInProcess(t *testing.T) {
	for _, impl := range []string{"tcp", "nio"} {
		for _, algo := range []dc.Algorithm{dc.RS, dc.CRS, dc.TRS} {
			for _, p := range []int{1, 2, 3} {
				t.Run(fmt.Sprintf("%s/%s/P=%d", impl, algo, p), func(t *testing.T) {
					rts := localPool(t, impl, p, dc.WithAlgorithm(algo))
					want := fibSeq(25)
					for i, got := range runAll(t, rts, fibKind, 25) {
						if got != want {
							t.Errorf("process %d: fib(25) = %d, want %d", i, got, want)
						}
					}
					var rep dc.Report
					for _, rt := range rts {
						if r := rt.Report(); len(r.Processes) > len(rep.Processes) {
							rep = r
						}
					}
					t.Logf("\n%s", reportText(rep))
					if len(rep.Processes) != p {
						t.Errorf("the report has %d processes, want %d", len(rep.Processes), p)
					}
					if rep.Total.Executed != rep.Total.Spawned {
						t.Errorf("executed %d jobs of %d spawned", rep.Total.Executed, rep.Total.Spawned)
					}
				})
			}
		}
	}
}

func TestSumInProcess(t *testing.T) {
	xs := make([]int, 1<<14)
	var want int64
	for i := range xs {
		xs[i] = i * 7 % 1013
		want += int64(xs[i])
	}
	rts := localPool(t, "tcp", 3, dc.WithAlgorithm(dc.TRS))
	for i, got := range runAll(t, rts, sumKind, xs) {
		if got != want {
			t.Errorf("process %d: sum = %d, want %d", i, got, want)
		}
	}
}

func reportText(r dc.Report) string {
	var b strings.Builder
	r.Print(&b)
	return b.String()
}

// TestWideAreaDelay runs with an emulated wide area between the two sites of the pool:
// messages between sites are held back, and the result is still right.
func TestWideAreaDelay(t *testing.T) {
	for _, algo := range []dc.Algorithm{dc.RS, dc.CRS, dc.TRS} {
		t.Run(algo.String(), func(t *testing.T) {
			rts := localPool(t, "tcp", 3, dc.WithAlgorithm(algo), dc.WithWideAreaDelay(2*time.Millisecond))
			for i, got := range runAll(t, rts, fibKind, 20) {
				if got != fibSeq(20) {
					t.Errorf("process %d: fib(20) = %d", i, got)
				}
			}
		})
	}
}

// TestMixedKinds runs jobs that spawn three kinds in turn, on one process and on two:
// every result must be right while the worker's task slots trade tasks between kinds.
func TestMixedKinds(t *testing.T) {
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			rts := localPool(t, "tcp", p)
			for i, got := range runAll(t, rts, mixedKind, 18) {
				if want := mixedSeq(18); got != want {
					t.Errorf("process %d: mixed(18) = %d, want %d", i, got, want)
				}
			}
		})
	}
}

// spinKind computes for ms milliseconds without spawning: a job that keeps its process
// busy while the other has nothing to steal.
var spinKind = dc.Define("test.spin", func(c *dc.Ctx, ms int) int64 {
	var n int64
	for start := time.Now(); time.Since(start) < time.Duration(ms)*time.Millisecond; n++ {
	}
	return 1
})

// idleKind spawns a job that computes for a[0] milliseconds and computes for a[1] itself:
// with a[0] short, a thief that took the first has nothing to steal for most of a[1].
var idleKind = dc.Define("test.idle", func(c *dc.Ctx, a [2]int) int64 {
	f := spinKind.Spawn(c, a[0])
	s := spinKind.Call(c, a[1])
	c.Sync()
	return s + f.Value()
})

// TestCRSAttemptsBounded runs CRS on two processes in two sites, each alone in its site,
// so that every steal request crosses the wide area. The root spawns a short job and
// computes for long itself: the other process steals the short job and then finds
// nothing for long. A refused request makes the next wait (wanState), so the requests
// of a process are bounded by a ladder of refusals (from the minimal back-off to the
// cap) per steal it made, plus one per cap's time it ran: far fewer than one per round
// trip, what an idle process sent before.
func TestCRSAttemptsBounded(t *testing.T) {
	const p = 2
	rts := localPool(t, "tcp", p, dc.WithAlgorithm(dc.CRS))
	start := time.Now()
	for i, got := range runAll(t, rts, idleKind, [2]int{10, 400}) {
		if got != 2 {
			t.Errorf("process %d: %d jobs done, want 2", i, got)
		}
	}
	elapsed := time.Since(start)
	var rep dc.Report
	for _, rt := range rts {
		if r := rt.Report(); len(r.Processes) > len(rep.Processes) {
			rep = r
		}
	}
	t.Logf("in %v:\n%s", elapsed.Round(time.Millisecond), reportText(rep))
	ladder := int64(1)
	for d := dc.MinBackoff; d < dc.MaxWideAreaBackoff; d *= 2 {
		ladder++
	}
	tot := rep.Total
	bound := (tot.Steals+p)*ladder + p*(int64(elapsed/dc.MaxWideAreaBackoff)+1)
	if tot.WideAreaAttempts > bound {
		t.Errorf("%d wide-area steal requests for %d steals in %v; the back-off allows at most %d",
			tot.WideAreaAttempts, tot.Steals, elapsed.Round(time.Millisecond), bound)
	}
}

// bigResultRun is what the jobs of one TestResultOverMessageLimit run share: the
// root's site, and a channel closed once a job was stolen.
type bigResultRun struct {
	rootSite string
	stolen   chan struct{}
	once     sync.Once
}

var bigRun atomic.Pointer[bigResultRun]

// The kinds of TestResultOverMessageLimit: the root job notes its site and spawns n
// jobs; a job run elsewhere (stolen) returns 100 KB, one run at the root's site waits
// until a job was stolen and returns a byte.
var (
	bigResult = dc.Define("test.bigresult", func(c *dc.Ctx, i int) []byte {
		r := bigRun.Load()
		if c.Site() != r.rootSite {
			r.once.Do(func() { close(r.stolen) })
			return make([]byte, 100_000)
		}
		select {
		case <-r.stolen:
		case <-c.Done():
		}
		return []byte{1}
	})
	bigResultRoot = dc.Define("test.bigresultroot", func(c *dc.Ctx, n int) int64 {
		bigRun.Store(&bigResultRun{rootSite: c.Site(), stolen: make(chan struct{})})
		fs := make([]*dc.Future[[]byte], n)
		for i := range fs {
			fs[i] = bigResult.Spawn(c, i)
		}
		c.Sync()
		var s int64
		for _, f := range fs {
			s += int64(len(f.Value()))
		}
		return s
	})
)

// TestResultOverMessageLimit: a stolen job's result is over its owner's message limit
// (64 KiB). The thief sends nothing of it (the result message was cut short before,
// and the owner failed on "read past end of message") but a failure that says why,
// and every process's run fails with it.
func TestResultOverMessageLimit(t *testing.T) {
	rts := localPoolWith(t, "tcp", 2, []ipl.Option{ipl.WithMaxMessageSize(64 << 10)})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errs := make([]error, len(rts))
	var wg sync.WaitGroup
	for i, rt := range rts {
		wg.Go(func() { _, errs[i] = dc.Run(ctx, rt, bigResultRoot, 4) })
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, dc.ErrJobFailed) || !strings.Contains(err.Error(), "over the limit") {
			t.Errorf("process %d: %v; want ErrJobFailed saying the result is over the limit", i, err)
		}
	}
}
