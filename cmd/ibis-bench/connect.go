package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/cluster"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/stats"
	"github.com/ibisgo/ibis/ipl"
)

func init() {
	register(&command{
		name:    "connect",
		summary: "time to create a port and connect it, and to join a pool of P members",
		setup:   setupConnect,
	})
	registerOp(opJoin, handleJoin)
}

// portTarget is the receive port on every peer that the connect test connects to.
const portTarget = "bench-target"

type connectFlags struct {
	reps, joinReps, procs int
	pools                 string
}

func setupConnect(fs *flag.FlagSet) func(ctx context.Context, e *env) (*report.Report, error) {
	var f connectFlags
	fs.IntVar(&f.reps, "reps", 60, "port create/connect measurements (reported: lower sextile and median)")
	fs.StringVar(&f.pools, "pool-sizes", "2,4,8,16", "pool sizes P for the join test")
	fs.IntVar(&f.joinReps, "join-reps", 5, "joins measured per pool size")
	fs.IntVar(&f.procs, "procs", 3, "peer processes the joining members are spread over (when ibis-bench starts its own)")
	return func(ctx context.Context, e *env) (*report.Report, error) {
		pools, err := parseInts("pool-sizes", f.pools)
		if err != nil {
			return nil, err
		}
		if slices.Min(pools) < 1 || slices.Max(pools) > 1024 || f.reps < 1 || f.joinReps < 1 || f.procs < 1 {
			return nil, fmt.Errorf("%w: pool sizes must be 1..1024, -reps, -join-reps and -procs at least 1", errUsage)
		}
		return e.runNetwork(ctx, f.procs+1, 2, func(ctx context.Context, g *cluster.Group, links []*link) (*report.Report, error) {
			return connectBench(ctx, e, g, links, f, pools)
		})
	}
}

func connectBench(ctx context.Context, e *env, g *cluster.Group, links []*link, f connectFlags, pools []int) (*report.Report, error) {
	addr, err := links[0].rawAddr(ctx)
	if err != nil {
		return nil, fmt.Errorf("raw baseline: %w", err)
	}
	var create, conn, closing, raw []float64
	peer := links[0].peer
	for i := range f.reps {
		e.Progress("connect %d/%d", i+1, f.reps)
		t0 := time.Now()
		sp, err := g.Ibis.CreateSendPort(targetType, "")
		if err != nil {
			return nil, err
		}
		t1 := time.Now()
		if err := sp.Connect(ctx, peer, portTarget); err != nil {
			_ = sp.Close()
			return nil, fmt.Errorf("connecting: %w", err)
		}
		t2 := time.Now()
		if err := sp.Close(); err != nil {
			return nil, err
		}
		t3 := time.Now()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return nil, err
		}
		t4 := time.Now()
		_ = c.Close()
		create = append(create, t1.Sub(t0).Seconds())
		conn = append(conn, t2.Sub(t1).Seconds())
		closing = append(closing, t3.Sub(t2).Seconds())
		raw = append(raw, t4.Sub(t3).Seconds())
	}
	rawS, _ := stats.Summarize(raw)
	t := &report.Table{
		Title:   "connect: creating a send port and connecting it; " + describe(g, e),
		Columns: []string{"step", "lower sextile", "median", "median/raw dial"},
		Notes: []string{
			fmt.Sprintf("%d repetitions; connect = Connect to a many-to-one receive port on another process (TCP connection plus the Ibis handshake)", f.reps),
			"raw dial: net.Dial to a listener in the same peer process (the TCP handshake alone)",
		},
	}
	values := map[string]any{}
	for _, r := range []struct {
		name string
		xs   []float64
	}{{"create send port", create}, {"connect", conn}, {"close (clean disconnect)", closing}, {"raw dial", raw}} {
		s, _ := stats.Summarize(r.xs)
		t.AddRow(r.name, seconds(s.LowerSextile), seconds(s.Median), s.Median/rawS.Median)
		values[r.name] = map[string]any{"lower_sextile_seconds": s.LowerSextile, "median_seconds": s.Median}
	}
	join := &report.Table{
		Title:   "connect: joining a pool of P members (all join at once, time until the pool is complete)",
		Columns: []string{"P", "lower sextile", "median", "max"},
		Notes: []string{
			fmt.Sprintf("the coordinator's instance and P-1 instances spread over %d peer processes (each a real member: own registry connection and listener), started together; time from the start order to the coordinator seeing the closed-world pool complete; %d repetitions", len(links), f.joinReps),
			"the registry is the run's own (embedded in the coordinator, or the pool's server)",
		},
	}
	var xs, ys []float64
	joins := map[string]any{}
	for i, p := range pools {
		var ts []float64
		for r := range f.joinReps {
			e.Progress("join P=%d (%d/%d), repetition %d", p, i+1, len(pools), r+1)
			d, err := joinOnce(ctx, e, g, links, p, fmt.Sprintf("%s-join-%d-%d", g.Pool(), p, r))
			if err != nil {
				return nil, fmt.Errorf("joining a pool of %d: %w", p, err)
			}
			ts = append(ts, d.Seconds())
		}
		s, _ := stats.Summarize(ts)
		join.AddRow(p, seconds(s.LowerSextile), seconds(s.Median), seconds(s.Max))
		xs, ys = append(xs, float64(p)), append(ys, s.Median*1e3)
		joins[fmt.Sprint(p)] = map[string]any{"lower_sextile_seconds": s.LowerSextile, "median_seconds": s.Median, "runs": ts}
	}
	rep := report.New("connect")
	rep.Tables = append(rep.Tables, t, join)
	rep.Plots = append(rep.Plots, &report.Plot{Title: "connect: time to join a pool", XLabel: "pool size P", YLabel: "median join time (ms)",
		Series: []report.Series{{Name: "join " + g.Ibis.Implementation(), X: xs, Y: ys}}})
	rep.Set("connect", values)
	rep.Set("join", joins)
	return rep, nil
}

// joinOnce forms a fresh pool of p members: the coordinator's instance and p-1 in
// the peer processes, started together, and returns the time until the coordinator
// sees it complete. It returns once every member has left again.
func joinOnce(ctx context.Context, e *env, g *cluster.Group, links []*link, p int, pool string) (time.Duration, error) {
	counts := make([]int, len(links))
	for i := range p - 1 {
		counts[i%len(links)]++
	}
	start := time.Now()
	for i, l := range links {
		if counts[i] == 0 {
			continue
		}
		if err := l.request(ctx, opJoin, func(w ipl.WriteMessage) error {
			return w.WriteObject(joinArgs{Registry: g.RegistryAddr(), Pool: pool, Size: p, Count: counts[i]})
		}); err != nil {
			return 0, err
		}
	}
	opts := append([]ipl.Option{ipl.WithRegistry(g.RegistryAddr()), ipl.WithPool(pool), ipl.WithPoolSize(p),
		ipl.WithTag("join-coordinator"), ipl.WithLogger(e.Log)}, implOptions(e)...)
	ib, err := ipl.New(ctx, opts...)
	if err != nil {
		return 0, err
	}
	err = ib.Registry().WaitUntilPoolClosed(ctx)
	d := time.Since(start)
	_ = ib.Close()
	for i, l := range links {
		if counts[i] == 0 {
			continue
		}
		var msg string
		aerr := l.await(ctx, func(m ipl.ReadMessage) error {
			var err error
			msg, err = m.ReadString()
			return err
		})
		if aerr == nil && msg != "" {
			aerr = fmt.Errorf("peer %d: %s", i, msg)
		}
		if err == nil {
			err = aerr
		}
	}
	return d, err
}

// joinArgs tell a peer process to add Count members to a pool.
type joinArgs struct {
	Registry, Pool string
	Size, Count    int
}

// handleJoin starts the members asked for, waits until their pool is complete,
// closes them and answers "" or what went wrong.
func handleJoin(ctx context.Context, s *peerService, m ipl.ReadMessage) error {
	var a joinArgs
	err := m.ReadObject(&a)
	if _, ferr := m.Finish(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	if a.Count < 1 || a.Count > 1024 || a.Size < a.Count {
		return fmt.Errorf("%w: bad join arguments %+v", errNotAnswer, a)
	}
	var wg sync.WaitGroup
	errs := make([]error, a.Count)
	for i := range a.Count {
		wg.Go(func() {
			opts := append([]ipl.Option{ipl.WithRegistry(a.Registry), ipl.WithPool(a.Pool), ipl.WithPoolSize(a.Size),
				ipl.WithTag(fmt.Sprintf("join-%d", i)), ipl.WithLogger(s.e.Log)}, implOptions(s.e)...)
			ib, err := ipl.New(ctx, opts...)
			if err != nil {
				errs[i] = err
				return
			}
			errs[i] = ib.Registry().WaitUntilPoolClosed(ctx)
			_ = ib.Close()
		})
	}
	wg.Wait()
	msg := ""
	for _, err := range errs {
		if err != nil {
			msg = err.Error()
			break
		}
	}
	return s.answer(ctx, func(w ipl.WriteMessage) error { return w.WriteString(msg) })
}
