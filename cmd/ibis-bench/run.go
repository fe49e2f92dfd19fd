package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
	_ "github.com/ibisgo/ibis/impl/nio" // the implementations -impl can name
	_ "github.com/ibisgo/ibis/impl/tcp"
	"github.com/ibisgo/ibis/internal/outfile"
	"github.com/ibisgo/ibis/ipl"
)

// nioFlavours are the values of -nio-send and -nio-receive.
var nioFlavours = []string{"blocking", "nonblocking", "thread"}

// Properties through which the nio flavours reach every pool member.
const (
	propNioSend    = "nio.send"
	propNioReceive = "nio.receive"
)

// commonFlags are the flags every subcommand takes.
type commonFlags struct {
	impl, nioSend, nioReceive string
	jsonPath, plotPath        string
	quiet, verbose            bool
	pool                      poolSettings
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.impl, "impl", "", "Ibis implementation (registered: "+strings.Join(ipl.Implementations(), ", ")+"); empty picks the first that fits")
	fs.StringVar(&c.nioSend, "nio-send", "", "send flavour for -impl nio only: blocking|nonblocking|thread (property nio.send)")
	fs.StringVar(&c.nioReceive, "nio-receive", "", "receive flavour for -impl nio only: blocking|nonblocking|thread (property nio.receive)")
	fs.StringVar(&c.jsonPath, "json", "", "also write the results as JSON to `FILE`")
	fs.StringVar(&c.plotPath, "plot", "", "also draw the curves to `FILE`.png or .svg (several figures: the first to FILE.png, the others to FILE-2.png, FILE-3.png, ...; each file written is named on stderr)")
	fs.BoolVar(&c.quiet, "q", false, "no progress lines on stderr")
	fs.BoolVar(&c.verbose, "v", false, "debug logging on stderr")
	fs.StringVar(&c.pool.registry, "registry", "", "run inside an existing pool: its registry `host:port` (default $"+ipl.EnvRegistry+"; unset: start own peers)")
	fs.StringVar(&c.pool.name, "pool", "", "pool name when running inside an existing pool (default $"+ipl.EnvPool+")")
	fs.IntVar(&c.pool.size, "pool-size", 0, "closed-world size of that pool (default $"+ipl.EnvPoolSize+")")
}

// validate checks the common flags before anything starts.
func (c *commonFlags) validate() error {
	for _, f := range []struct{ name, v string }{{"-nio-send", c.nioSend}, {"-nio-receive", c.nioReceive}} {
		if f.v != "" && !slices.Contains(nioFlavours, f.v) {
			return fmt.Errorf("%w: %s %q: want one of %s", errUsage, f.name, f.v, strings.Join(nioFlavours, ", "))
		}
	}
	if c.impl != "" && !slices.Contains(ipl.Implementations(), c.impl) {
		return fmt.Errorf("%w: %q is not linked in (have %s)", ipl.ErrNoImplementation, c.impl, strings.Join(ipl.Implementations(), ", "))
	}
	if c.plotPath != "" {
		if ext := strings.ToLower(c.plotPath[strings.LastIndexByte(c.plotPath, '.')+1:]); ext != "png" && ext != "svg" {
			return fmt.Errorf("%w: -plot %q: the file must end in .png or .svg", errUsage, c.plotPath)
		}
	}
	// Files are written at the end, by the coordinator: one that cannot be is said
	// before the run. -plot also writes FILE-2.png, ... next to FILE.
	for _, f := range []struct {
		name, path string
		check      func(string, string) error
	}{{"-json", c.jsonPath, outfile.Check}, {"-plot", c.plotPath, outfile.CheckWithSiblings}} {
		if f.path == "" || isPeer() {
			continue
		}
		if err := f.check(f.name, f.path); err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
	}
	if c.pool.size < 0 {
		return fmt.Errorf("%w: -pool-size %d is negative", errUsage, c.pool.size)
	}
	return nil
}

// errUsage marks errors in the command line; run exits with status 2 for them.
var errUsage = errors.New("usage")

// run is ibis-bench's main: it returns the exit status (0 success, 1 failure, 2 usage).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	}
	c := lookup(args[0])
	if c == nil {
		fmt.Fprintf(stderr, "ibis-bench: unknown subcommand %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	fs := flag.NewFlagSet("ibis-bench "+c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf commonFlags
	cf.register(fs)
	runFn := c.setup(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "ibis-bench %s: %s\n\nFlags:\n", c.name, c.summary)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ibis-bench %s: unexpected argument %q\n", c.name, fs.Arg(0))
		return 2
	}
	if err := cf.validate(); err != nil {
		fmt.Fprintf(stderr, "ibis-bench %s: %v\n", c.name, err)
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	log := zap.NewNop()
	if cf.verbose {
		lc := zap.NewDevelopmentConfig()
		lc.OutputPaths, lc.ErrorOutputPaths = []string{"stderr"}, []string{"stderr"}
		lc.Level = zap.NewAtomicLevelAt(zapcore.DebugLevel)
		l, err := lc.Build()
		if err != nil {
			fmt.Fprintf(stderr, "ibis-bench: logger: %v\n", err)
			return 1
		}
		log = l.Named(c.name)
		defer func() { _ = log.Sync() }()
	}
	e := &env{
		Impl:    cf.impl,
		Props:   map[string]string{},
		Quiet:   cf.quiet,
		Log:     log,
		pool:    cf.pool.withEnvironment(),
		command: c.name,
		args:    args[1:],
		stderr:  stderr,
	}
	if cf.nioSend != "" {
		e.Props[propNioSend] = cf.nioSend
	}
	if cf.nioReceive != "" {
		e.Props[propNioReceive] = cf.nioReceive
	}
	if cf.impl != "" && cf.impl != "nio" && len(e.Props) > 0 {
		fmt.Fprintf(stderr, "ibis-bench %s: note: -nio-send/-nio-receive apply to -impl nio only; %s ignores them\n", c.name, cf.impl)
	}
	e.Progress = newProgress(stderr, c.name, cf.quiet || isPeer())
	rep, err := runFn(ctx, e)
	if err != nil {
		fmt.Fprintf(stderr, "ibis-bench %s: %v\n", c.name, err)
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	if rep == nil { // a peer: the coordinator prints
		return 0
	}
	if err := output(rep, cf, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "ibis-bench %s: %v\n", c.name, err)
		return 1
	}
	return 0
}

// output prints the report and writes the files asked for, naming each on stderr (one
// -plot may make several figures: the first gets the name asked for).
func output(rep *report.Report, cf commonFlags, stdout, stderr io.Writer) error {
	if err := rep.WriteText(stdout); err != nil {
		return err
	}
	if cf.jsonPath != "" {
		if err := rep.WriteJSON(cf.jsonPath); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "ibis-bench: wrote %s\n", cf.jsonPath)
	}
	if cf.plotPath != "" {
		written, err := rep.SavePlot(cf.plotPath)
		for i, name := range written {
			fmt.Fprintf(stderr, "ibis-bench: wrote %s (%s)\n", name, rep.Plots[i].Title)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
