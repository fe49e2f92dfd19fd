package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ibisgo/ibis/internal/applaunch"
	"github.com/ibisgo/ibis/internal/outfile"
	"github.com/ibisgo/ibis/ipl"

	_ "github.com/ibisgo/ibis/impl/mp"  // MPI: -impl mp under mpirun, in a build with -tags mpi
	_ "github.com/ibisgo/ibis/impl/nio" // the gnet event-loop implementation (-impl nio)
	_ "github.com/ibisgo/ibis/impl/tcp" // the TCP implementation (the default)
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// config is the parsed command line.
type config struct {
	n        int
	iters    int
	np       int
	bind     bool // -np binds the processes to cores
	async    bool
	verify   bool
	image    string
	quiet    bool
	phases   bool
	timeout  time.Duration
	ipl      []ipl.Option
	impl     string          // -impl as given ("" when unset)
	set      map[string]bool // the flags given
	progress time.Duration   // after this long, a progress line every progress
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the program without the process-wide parts, for tests: it parses args, then either
// starts a local pool (-np) or takes part in one, and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "sor: %v\nrun 'sor -h' for usage\n", err)
		return exitUsage
	}
	if cfg.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.timeout)
		defer cancel()
	}
	if cfg.np > 0 {
		return applaunch.Local(ctx, "sor", cfg.np, args, stdout, stderr, cfg.bind)
	}
	if err := solve(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "sor: %v\n", err)
		if errors.Is(err, errUsage) {
			return exitUsage
		}
		return exitFailure
	}
	return exitOK
}

// errUsage marks errors that a command line caused but that only the pool could tell (more
// processes than rows).
var errUsage = errors.New("a usage error")

func parseArgs(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("sor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: sor [flags]

Red/black successive over-relaxation of an N x N Laplace problem, distributed by rows over
the processes of an Ibis pool (see 'go doc ./apps/sor').

  sor -np 4 -n 2048                  four local processes, embedded registry
  ibis-run -np 4 -- sor -n 2048      the same under ibis-run
  mpirun -np 4 ./sor -impl mp        over MPI (built with -tags mpi)

flags:
`)
		fs.PrintDefaults()
	}
	cfg := &config{progress: 3 * time.Second}
	opts := ipl.Flags(fs)
	fs.IntVar(&cfg.n, "n", 1024, "interior size N: the grid is (N+2) x (N+2)")
	fs.IntVar(&cfg.iters, "iters", 0, "stop after this many iterations (0: only at convergence)")
	fs.IntVar(&cfg.np, "np", 0, "start this many local processes with an embedded registry (0: join the pool of the environment)")
	fs.BoolVar(&cfg.bind, "bind", true, "with -np, bind each process to a core of its own when there are enough (as mpirun does)")
	fs.BoolVar(&cfg.async, "async", false, "compute the inner rows while the boundary rows travel")
	fs.BoolVar(&cfg.verify, "verify", false, "also compute sequentially in-process and require a bitwise-equal grid")
	fs.StringVar(&cfg.image, "image", "", "write a heat map of the final grid (axes, colour bar) to this PNG `file`")
	fs.BoolVar(&cfg.phases, "phases", false, "print where the ranks' time went: computing, exchanging rows, the allreduce (min, mean, max over the ranks)")
	fs.BoolVar(&cfg.quiet, "q", false, "no progress lines on stderr")
	fs.DurationVar(&cfg.timeout, "timeout", 0, "give up after this long (0: never)")
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
		return nil, fmt.Errorf("unexpected argument %q: sor takes only flags", fs.Arg(0))
	case cfg.n < 1:
		return nil, fmt.Errorf("-n %d: the interior size must be at least 1", cfg.n)
	case cfg.n > 1<<15:
		return nil, fmt.Errorf("-n %d: at most %d (a grid of %d GiB)", cfg.n, 1<<15, 8)
	case cfg.iters < 0:
		return nil, fmt.Errorf("-iters %d: must be at least 0 (0: until convergence)", cfg.iters)
	case cfg.np < 0:
		return nil, fmt.Errorf("-np %d: must be at least 0", cfg.np)
	case cfg.np > cfg.n:
		return nil, fmt.Errorf("-np %d is more than the %d rows of -n %d: every process needs at least one row", cfg.np, cfg.n, cfg.n)
	case cfg.np > maxLocal:
		return nil, fmt.Errorf("-np %d: at most %d local processes", cfg.np, maxLocal)
	case cfg.timeout < 0:
		return nil, fmt.Errorf("-timeout %v: must not be negative", cfg.timeout)
	case cfg.image != "" && !strings.HasSuffix(strings.ToLower(cfg.image), ".png"):
		return nil, fmt.Errorf("-image %q: the file name must end in .png", cfg.image)
	}
	if cfg.np > 0 {
		if err := applaunch.CheckFlags("sor", cfg.set, cfg.impl); err != nil {
			return nil, err
		}
	}
	if err := outfile.CheckAtRankZero(ipl.LaunchRank(), "-image", cfg.image); err != nil {
		return nil, err // before the run, not after it
	}
	return cfg, nil
}

// maxLocal bounds -np: a local pool of more processes is a mistake, not a benchmark.
const maxLocal = 256
