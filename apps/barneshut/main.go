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
	bodies     int
	spheres    int
	seed       uint64
	input      string
	out        string
	p          params
	np         int
	bind       bool // -np binds the processes to cores
	verify     bool
	image      string
	imageEvery int
	quiet      bool
	phases     bool
	timeout    time.Duration
	ipl        []ipl.Option
	impl       string          // -impl as given ("" when unset)
	set        map[string]bool // the flags given
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
		fmt.Fprintf(stderr, "barneshut: %v\nrun 'barneshut -h' for usage\n", err)
		return exitUsage
	}
	if cfg.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.timeout)
		defer cancel()
	}
	if cfg.np > 0 {
		return applaunch.Local(ctx, "barneshut", cfg.np, args, stdout, stderr, cfg.bind)
	}
	if err := simulate(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "barneshut: %v\n", err)
		if errors.Is(err, errUsage) {
			return exitUsage
		}
		return exitFailure
	}
	return exitOK
}

// errUsage marks errors that a command line caused but that only the pool could tell (more
// processes than bodies).
var errUsage = errors.New("a usage error")

func parseArgs(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("barneshut", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: barneshut [flags]

Barnes-Hut N-body simulation (octree, monopoles, leapfrog), the forces distributed over
the processes of an Ibis pool in Morton order (see 'go doc ./apps/barneshut').

  barneshut -np 4 -bodies 100000 -steps 10     four local processes, embedded registry
  ibis-run -np 4 -- barneshut -bodies 100000   the same under ibis-run
  mpirun -np 4 ./barneshut -impl mp            over MPI (built with -tags mpi)

flags:
`)
		fs.PrintDefaults()
	}
	cfg := &config{}
	opts := ipl.Flags(fs)
	fs.IntVar(&cfg.bodies, "bodies", 16384, "number of bodies of the generated Plummer model")
	fs.IntVar(&cfg.spheres, "spheres", 2, "1: one Plummer sphere; 2: two colliding spheres")
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the generated model")
	fs.StringVar(&cfg.input, "input", "", "read the bodies from this NEMO atos text `file` instead of generating them")
	fs.StringVar(&cfg.out, "out", "", "write the final bodies to this atos text `file`")
	fs.IntVar(&cfg.p.leaf, "leaf", 8, "most bodies in a leaf of the octree")
	fs.Float64Var(&cfg.p.eps, "eps", 0.025, "Plummer softening length")
	fs.Float64Var(&cfg.p.theta, "theta", 0.5, "opening criterion: a cell is used whole when size/distance < theta")
	fs.Float64Var(&cfg.p.dt, "dt", 0.025, "time step")
	fs.IntVar(&cfg.p.steps, "steps", 10, "number of leapfrog steps")
	fs.IntVar(&cfg.np, "np", 0, "start this many local processes with an embedded registry (0: join the pool of the environment)")
	fs.BoolVar(&cfg.bind, "bind", true, "with -np, bind each process to a core of its own when there are enough (as mpirun does)")
	fs.BoolVar(&cfg.verify, "verify", false, "compare the final accelerations of >= 1000 bodies with direct summation")
	fs.StringVar(&cfg.image, "image", "", "write the final bodies, projected on x-y, to this PNG `file` (each file written is named on stderr)")
	fs.IntVar(&cfg.imageEvery, "image-every", 0, "with -image FILE.png, also write FILE-NNNNNN.png (NNNNNN: the step, six digits) at step 0 and every `K` steps")
	fs.BoolVar(&cfg.phases, "phases", false, "print where the ranks' time went: tree building, tree walks, the force exchange, the body updates (min, mean, max over the ranks)")
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
		return nil, fmt.Errorf("unexpected argument %q: barneshut takes only flags", fs.Arg(0))
	case checkBodies(cfg.bodies) != nil:
		return nil, fmt.Errorf("-bodies %d: %w", cfg.bodies, checkBodies(cfg.bodies))
	case cfg.spheres != 1 && cfg.spheres != 2:
		return nil, fmt.Errorf("-spheres %d: want 1 or 2", cfg.spheres)
	case cfg.p.leaf < 1:
		return nil, fmt.Errorf("-leaf %d: want at least 1", cfg.p.leaf)
	case !(cfg.p.eps >= 0) || cfg.p.eps > 1e100:
		return nil, fmt.Errorf("-eps %g: want a finite number of at least 0", cfg.p.eps)
	case !(cfg.p.theta >= 0) || cfg.p.theta > 10:
		return nil, fmt.Errorf("-theta %g: want 0 to 10 (0: direct summation through the tree)", cfg.p.theta)
	case !(cfg.p.dt > 0) || cfg.p.dt > 1e100:
		return nil, fmt.Errorf("-dt %g: want a finite number above 0", cfg.p.dt)
	case cfg.p.steps < 0:
		return nil, fmt.Errorf("-steps %d: want at least 0", cfg.p.steps)
	case cfg.np < 0:
		return nil, fmt.Errorf("-np %d: must be at least 0", cfg.np)
	case cfg.np > maxLocal:
		return nil, fmt.Errorf("-np %d: at most %d local processes", cfg.np, maxLocal)
	case cfg.np > cfg.bodies && cfg.input == "":
		return nil, fmt.Errorf("-np %d is more than the %d bodies: every process needs at least one", cfg.np, cfg.bodies)
	case cfg.timeout < 0:
		return nil, fmt.Errorf("-timeout %v: must not be negative", cfg.timeout)
	case cfg.image != "" && !strings.HasSuffix(strings.ToLower(cfg.image), ".png"):
		return nil, fmt.Errorf("-image %q: the file name must end in .png", cfg.image)
	case cfg.imageEvery < 0:
		return nil, fmt.Errorf("-image-every %d: want at least 0", cfg.imageEvery)
	case cfg.imageEvery > 0 && cfg.image == "":
		return nil, errors.New("-image-every without -image: name the pictures with -image FILE.png")
	case cfg.input != "" && (cfg.set["bodies"] || cfg.set["spheres"] || cfg.set["seed"]):
		return nil, errors.New("-input with -bodies, -spheres or -seed: the input file gives the bodies")
	}
	if cfg.np > 0 {
		if err := applaunch.CheckFlags("barneshut", cfg.set, cfg.impl); err != nil {
			return nil, err
		}
	}
	if err := outfile.CheckAtRankZero(ipl.LaunchRank(), "-out", cfg.out, "-image", cfg.image); err != nil {
		return nil, err // before the run, not after it
	}
	return cfg, nil
}

// maxLocal bounds -np: a local pool of more processes is a mistake, not a benchmark.
const maxLocal = 256
