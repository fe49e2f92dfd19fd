// Package dcapp is the command line shared by the divide-and-conquer applications
// (apps/fib, apps/nqueens, apps/uts): the Ibis and dc flags, -np for a local pool, the
// run on the pool, and the report the root prints. Each application gives only its
// own flags, its job and the check of its result.
package dcapp

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ibisgo/ibis/dc"
	"github.com/ibisgo/ibis/internal/applaunch"
	"github.com/ibisgo/ibis/internal/applog"
	"github.com/ibisgo/ibis/ipl"
)

// Exit statuses.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// App is one application.
type App struct {
	// Name is the program's name, for messages and usage.
	Name string
	// Usage is the text before the flags in -h.
	Usage string
	// Flags defines the application's own flags on fs.
	Flags func(fs *flag.FlagSet)
	// Check validates the application's flags after parsing; set holds the names of
	// the flags given.
	Check func(set map[string]bool) error
	// Run runs the computation on the pool (every process calls it) and returns the
	// result line the root prints (without newline) and the fields of -json.
	Run func(ctx context.Context, rt *dc.Runtime) (line string, fields map[string]any, err error)
	// Alone, when set, runs the same recursion without Ibis (for -goroutines): as
	// goroutines in this one process.
	Alone func(ctx context.Context) (line string, fields map[string]any, err error)
}

// Main runs the application with the process's arguments and exits.
func Main(a App) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := a.Exec(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// config is the parsed common command line.
type config struct {
	np         int
	bind       bool
	algo       dc.Algorithm
	jsonOut    bool
	stats      bool
	goroutines bool
	timeout    time.Duration
	stealWait  time.Duration
	verbose    bool
	progress   time.Duration
	sites      int
	wanDelay   time.Duration
	ipl        []ipl.Option
	impl       string
	set        map[string]bool
}

// Exec is the program without the process-wide parts, for tests: it returns the exit
// status.
func (a App) Exec(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := a.parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\nrun '%s -h' for usage\n", a.Name, err, a.Name)
		return ExitUsage
	}
	if cfg.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.timeout)
		defer cancel()
	}
	if cfg.np > 0 {
		// A lost process's jobs run again elsewhere: the run survives it.
		return applaunch.Local(ctx, a.Name, cfg.np, args, stdout, stderr, cfg.bind, applaunch.WithLossTolerated())
	}
	if err := a.run(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", a.Name, err)
		return ExitFailure
	}
	return ExitOK
}

func (a App) parse(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet(a.Name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, a.Usage, "\nflags:\n")
		fs.PrintDefaults()
	}
	cfg := &config{}
	opts := ipl.Flags(fs)
	fs.IntVar(&cfg.np, "np", 0, "start this many local processes with an embedded registry (0: join the pool of the environment)")
	fs.BoolVar(&cfg.bind, "bind", false, "with -np, bind each process to a core of its own when there are enough (its dispatcher then shares the core with the worker and answers steal requests late)")
	fs.Var(&cfg.algo, "steal", "work-stealing algorithm: rs (random), crs (cluster-aware random) or trs (transitive random)")
	fs.BoolVar(&cfg.jsonOut, "json", false, "print the result and statistics as one JSON object")
	fs.BoolVar(&cfg.stats, "stats", false, "print the statistics of every process after the result")
	fs.BoolVar(&cfg.goroutines, "goroutines", false, "run the same recursion as goroutines in this one process, without Ibis (the baseline)")
	fs.DurationVar(&cfg.timeout, "timeout", 0, "give up after this long (0: never)")
	fs.DurationVar(&cfg.stealWait, "steal-timeout", 10*time.Second, "how long a thief waits for the answer to a steal request")
	fs.BoolVar(&cfg.verbose, "v", false, "log what the work-stealing runtime does (on stderr)")
	fs.DurationVar(&cfg.progress, "progress", 3*time.Second, "the root prints a progress line on stderr this often (0: none)")
	fs.DurationVar(&cfg.wanDelay, "wan-delay", envDuration(dc.EnvWideAreaDelay), "emulate a wide area: delay every message to another site by this much (default $"+dc.EnvWideAreaDelay+")")
	fs.IntVar(&cfg.sites, "sites", 0, "split the processes into this many sites by rank (site<rank mod sites>), for CRS without a real wide area (0: IBIS_SITE, or one site)")
	if a.Flags != nil {
		a.Flags(fs)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	cfg.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { cfg.set[f.Name] = true })
	cfg.ipl = opts()
	if f := fs.Lookup("impl"); f != nil {
		cfg.impl = f.Value.String()
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument %q: %s takes only flags", fs.Arg(0), a.Name)
	case cfg.np < 0 || cfg.np > 256:
		return nil, fmt.Errorf("-np %d: must be 0 to 256", cfg.np)
	case cfg.timeout < 0:
		return nil, fmt.Errorf("-timeout %v: must not be negative", cfg.timeout)
	case cfg.progress < 0:
		return nil, fmt.Errorf("-progress %v: must not be negative", cfg.progress)
	case cfg.stealWait <= 0:
		return nil, fmt.Errorf("-steal-timeout %v: must be positive", cfg.stealWait)
	case cfg.wanDelay < 0:
		return nil, fmt.Errorf("-wan-delay %v: must not be negative", cfg.wanDelay)
	case cfg.sites < 0:
		return nil, fmt.Errorf("-sites %d: must not be negative", cfg.sites)
	case cfg.goroutines && cfg.np > 0:
		return nil, errors.New("-goroutines with -np: the goroutine baseline runs in one process")
	case cfg.goroutines && a.Alone == nil:
		return nil, fmt.Errorf("-goroutines: %s has no goroutine version", a.Name)
	}
	if cfg.np > 0 {
		if err := applaunch.CheckFlags(a.Name, cfg.set, cfg.impl); err != nil {
			return nil, err
		}
	}
	if a.Check != nil {
		if err := a.Check(cfg.set); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// output is what -json prints.
type output struct {
	App        string         `json:"app"`
	Impl       string         `json:"impl,omitempty"`
	Processes  int            `json:"processes"`
	Seconds    float64        `json:"seconds"`
	Result     map[string]any `json:"result"`
	Statistics *dc.Report     `json:"statistics,omitempty"`
}

// run is one process of the pool (or the goroutine baseline).
func (a App) run(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	if cfg.goroutines {
		start := time.Now()
		line, fields, err := a.Alone(ctx)
		if err != nil {
			return err
		}
		secs := time.Since(start).Seconds()
		return a.print(stdout, cfg, output{App: a.Name, Processes: 1, Seconds: secs, Result: fields}, line, nil)
	}
	log := applog.New(cfg.verbose)
	// The Ibis's own warnings (a registry that is not there) always; with -v everything,
	// the implementation and its flavours included.
	opts := append(dc.IbisOptions(), ipl.WithLogger(log))
	opts = append(opts, cfg.ipl...)
	if cfg.sites > 0 {
		opts = append(opts, ipl.WithTag(fmt.Sprintf("site%d", launchRank()%cfg.sites)))
	}
	var icfg ipl.Config
	for _, o := range opts {
		o(&icfg)
	}
	// A program started on its own, without a registry or a pool size, is a pool of one
	// (with an embedded registry), as an MPI program without mpirun is a singleton.
	if err := icfg.ApplyEnvironment(os.LookupEnv); err == nil && icfg.Registry == "" && icfg.PoolSize == 0 && icfg.Implementation != "mp" {
		opts = append(opts, ipl.WithPoolSize(1))
	}
	ib, err := ipl.New(ctx, opts...)
	if err != nil {
		return fmt.Errorf("joining the pool: %w", err)
	}
	rt, err := dc.New(ctx, ib, dc.WithAlgorithm(cfg.algo), dc.WithStealTimeout(cfg.stealWait), dc.WithLogger(log),
		dc.WithWideAreaDelay(cfg.wanDelay))
	if err != nil {
		return errors.Join(err, ib.Close())
	}
	stopProgress := func() {}
	if cfg.progress > 0 {
		stopProgress = a.showProgress(rt, cfg.progress, stderr)
	}
	start := time.Now()
	line, fields, err := a.Run(ctx, rt)
	secs := time.Since(start).Seconds()
	stopProgress()
	cerr := errors.Join(rt.Close(), ib.Close())
	if err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("closing: %w", cerr)
	}
	if !rt.Root() {
		return nil
	}
	rep := rt.Report()
	return a.print(stdout, cfg, output{App: a.Name, Impl: ib.Implementation(), Processes: len(rep.Processes), Seconds: secs,
		Result: fields, Statistics: &rep}, line, &rep)
}

func (a App) print(w io.Writer, cfg *config, out output, line string, rep *dc.Report) error {
	if cfg.jsonOut {
		enc := json.NewEncoder(w)
		return enc.Encode(out)
	}
	where := "in one process as goroutines"
	if rep != nil {
		where = fmt.Sprintf("on %d process(es) over %s, %s stealing", out.Processes, out.Impl, rep.Algorithm)
	}
	fmt.Fprintf(w, "%s %s: %.3f s\n", line, where, out.Seconds)
	if rep != nil && cfg.stats {
		rep.Print(w)
	} else if rep != nil {
		t := rep.Total
		fmt.Fprintf(w, "jobs %d, stolen %d (%.2f attempts per steal), wide-area messages %d\n",
			t.Spawned, t.Steals, t.AttemptsPerSteal(), t.WideAreaMessages)
	}
	return nil
}

// launchRank is this process's index in its launch (ipl.LaunchRank: ibis-run's and
// -np's IBIS_RANK, mpirun's or srun's rank); 0 when none says.
func launchRank() int { return max(ipl.LaunchRank(), 0) }

// envDuration reads a duration from the environment (0 when unset or not a duration).
func envDuration(name string) time.Duration {
	d, err := time.ParseDuration(os.Getenv(name))
	if err != nil {
		return 0
	}
	return d
}
