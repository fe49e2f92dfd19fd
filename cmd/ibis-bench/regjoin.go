package main

// registry-join: how long a pool of N members takes to join when every member must
// see every Joined event, and what the registry's processes need for it, for the
// memory store and for the etcd store (issue 26, docs/REGISTRY-HA.md).

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/stats"
)

func init() {
	register(&command{
		name:    "registry-join",
		summary: "time for a pool of N registry members to join and see each other, memory or etcd store",
		setup:   setupRegjoin,
	})
}

// regjoinFlags are the experiment's own flags.
type regjoinFlags struct {
	members, procs, fronts, nodes, reps int
	store, etcdBin, profile             string
	timeout                             time.Duration

	// etcd are the endpoints of -store etcd://..., a cluster run by someone else.
	etcd []string
}

func setupRegjoin(fs *flag.FlagSet) func(ctx context.Context, e *env) (*report.Report, error) {
	var f regjoinFlags
	fs.IntVar(&f.members, "members", 1000, "pool size N: members that join, each its own registry client and connection")
	fs.IntVar(&f.procs, "procs", 4, "OS processes the members are spread over")
	fs.StringVar(&f.store, "store", "memory", "the front ends' store: memory, etcd (a cluster this command starts, see -etcd-nodes), or etcd://`HOST:PORT[,HOST:PORT...]` (a running cluster)")
	fs.IntVar(&f.nodes, "etcd-nodes", 1, "nodes of the etcd cluster started for -store etcd")
	fs.StringVar(&f.etcdBin, "etcd-bin", "", "etcd server binary for -store etcd (default "+defaultEtcdBinary+", else etcd in PATH)")
	fs.IntVar(&f.fronts, "front-ends", 1, "registry front ends (ibis-registry processes); more than one needs an etcd store")
	fs.IntVar(&f.reps, "reps", 1, "runs, each with fresh processes (and a fresh etcd cluster)")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "limit of one run")
	fs.StringVar(&f.profile, "profile", "", "write a CPU profile of every front end and member process to `DIR` (runR-frontI.pprof, runR-membersI.pprof)")
	return func(ctx context.Context, e *env) (*report.Report, error) {
		if r, ok, err := startedRole(); ok {
			if err != nil {
				return nil, err
			}
			return nil, playRole(ctx, r, e)
		}
		if err := f.validate(); err != nil {
			return nil, err
		}
		return regjoinBench(ctx, e, f)
	}
}

// validate checks the flags and reads -store.
func (f *regjoinFlags) validate() error {
	switch {
	case f.members < 1 || f.procs < 1 || f.fronts < 1 || f.reps < 1:
		return fmt.Errorf("%w: -members, -procs, -front-ends and -reps must be at least 1", errUsage)
	case f.procs > f.members:
		return fmt.Errorf("%w: -procs %d is more than -members %d", errUsage, f.procs, f.members)
	case f.nodes < 1:
		return fmt.Errorf("%w: -etcd-nodes %d: at least 1", errUsage, f.nodes)
	case f.timeout <= 0:
		return fmt.Errorf("%w: -timeout %v must be positive", errUsage, f.timeout)
	}
	switch rest, ok := strings.CutPrefix(f.store, "etcd://"); {
	case f.store == "memory":
		if f.fronts > 1 {
			return fmt.Errorf("%w: -front-ends %d needs an etcd store (-store etcd)", errUsage, f.fronts)
		}
	case f.store == "etcd":
	case ok:
		f.etcd = parseList(rest)
		if len(f.etcd) == 0 {
			return fmt.Errorf("%w: -store %q names no endpoint", errUsage, f.store)
		}
	default:
		return fmt.Errorf("%w: -store %q: want memory, etcd or etcd://HOST:PORT[,HOST:PORT...]", errUsage, f.store)
	}
	return nil
}

// storeName describes the store in the report.
func (f *regjoinFlags) storeName() string {
	switch {
	case f.store == "memory":
		return "memory"
	case f.store == "etcd" && f.nodes == 1:
		return "etcd, 1 node"
	case f.store == "etcd":
		return fmt.Sprintf("etcd, %d nodes", f.nodes)
	default:
		return "etcd at " + strings.Join(f.etcd, ",")
	}
}

// playRole runs the part of a process this experiment started.
func playRole(ctx context.Context, r regjoinRole, e *env) error {
	// What goes wrong in the registry goes to stderr, which the experiment shows
	// when the process fails.
	log := zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()),
		zapcore.Lock(zapcore.AddSync(e.stderr)), zapcore.WarnLevel))
	defer func() { _ = log.Sync() }()
	switch r.Role {
	case roleFront:
		return runFront(ctx, r, os.Stdin, os.Stdout, log.Named("front"+strconv.Itoa(r.Index)))
	case roleMembers:
		return runMembers(ctx, r, os.Stdin, os.Stdout, log.Named("members"+strconv.Itoa(r.Index)))
	}
	return fmt.Errorf("%s: unknown role %q", envRegjoinRole, r.Role)
}

// regjoinBench runs the experiment -reps times and reports every run.
func regjoinBench(ctx context.Context, e *env, f regjoinFlags) (*report.Report, error) {
	t := &report.Table{
		Title: fmt.Sprintf("registry-join: %d members in %d processes join one pool, %d front end(s), store %s",
			f.members, f.procs, f.fronts, f.storeName()),
		Columns: []string{"run", "all seen", "median seen", "join p50", "join max",
			"front RSS (MiB)", "etcd RSS (MiB)", "CPU front", "CPU etcd", "CPU members", "front writes", "per front end"},
		Notes: []string{
			"all seen: from the start of the joins until the last member saw the last of the N Joined events; median seen: the same for the median member",
			"join: one member's Join, from the call until the answer",
			"RSS: peak resident set (VmHWM) of the largest process of its kind; CPU: user+system time of all processes of a kind from the start until the last member reported (every process in the JSON)",
			"front writes: write system calls of the front ends in that time (all of them, mostly frames to members); per front end: members that joined at each",
		},
	}
	if f.profile != "" {
		if err := os.MkdirAll(f.profile, 0o755); err != nil {
			return nil, fmt.Errorf("-profile: %w", err)
		}
	}
	rep := report.New("registry-join")
	var runs []map[string]any
	var all []float64
	for run := 1; run <= f.reps; run++ {
		e.Progress("run %d/%d", run, f.reps)
		r, err := regjoinOnce(ctx, e, f, run)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", run, err)
		}
		etcdRSS, etcdCPU := "-", "-"
		if len(r.etcdRSS) > 0 {
			etcdRSS = fmt.Sprintf("%.1f", mib(maxInt64(r.etcdRSS)))
			etcdCPU = report.FormatCell(sumDurations(r.etcdCPU))
		}
		t.AddRow(run, r.allSeen, r.medianSeen, r.joinMedian, r.joinMax,
			mib(maxInt64(r.frontRSS)), etcdRSS, sumDurations(r.frontCPU), etcdCPU, sumDurations(r.memberCPU),
			sumInt64(r.frontWrites), joinInts(r.perFront, "/"))
		all = append(all, r.allSeen.Seconds())
		runs = append(runs, map[string]any{
			"all_seen_seconds":    r.allSeen.Seconds(),
			"median_seen_seconds": r.medianSeen.Seconds(),
			"join_median_seconds": r.joinMedian.Seconds(),
			"join_max_seconds":    r.joinMax.Seconds(),
			"front_peak_rss":      r.frontRSS,
			"etcd_peak_rss":       r.etcdRSS,
			"members_peak_rss":    r.memberRSS,
			"members_per_front":   r.perFront,
			"front_cpu_seconds":   durationSeconds(r.frontCPU),
			"etcd_cpu_seconds":    durationSeconds(r.etcdCPU),
			"members_cpu_seconds": durationSeconds(r.memberCPU),
			"front_write_calls":   r.frontWrites,
		})
	}
	s, _ := stats.Summarize(all)
	t.Notes = append(t.Notes, fmt.Sprintf("all seen over %d run(s): median %v, min %v, max %v",
		len(all), report.FormatCell(seconds(s.Median)), report.FormatCell(seconds(s.Min)), report.FormatCell(seconds(s.Max))))
	rep.Tables = append(rep.Tables, t)
	rep.Set("members", f.members)
	rep.Set("procs", f.procs)
	rep.Set("front_ends", f.fronts)
	rep.Set("store", f.storeName())
	rep.Set("runs", runs)
	rep.Set("all_seen_median_seconds", s.Median)
	return rep, nil
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func maxInt64(xs []int64) int64 {
	m := int64(-1)
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func joinInts(xs []int, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, sep)
}

// sumDurations adds the known durations (>= 0) up.
func sumDurations(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += max(d, 0)
	}
	return sum
}

func durationSeconds(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = d.Seconds()
	}
	return out
}

// sumInt64 adds the known counts (>= 0) up.
func sumInt64(xs []int64) int64 {
	var sum int64
	for _, x := range xs {
		sum += max(x, 0)
	}
	return sum
}
