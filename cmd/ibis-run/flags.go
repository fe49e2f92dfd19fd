package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/ibisgo/ibis/internal/launch"
	"github.com/ibisgo/ibis/registry"
)

// maxProcs bounds -np: far more processes than one machine runs usefully, far fewer than
// would exhaust its process table by mistake.
const maxProcs = 4096

// errUsage marks command-line mistakes; run reports them with exit status 2.
var errUsage = errors.New("usage")

// settings is the parsed command line.
type settings struct {
	np        int
	impl      string
	metrics   string
	pool      string
	heartbeat time.Duration
	death     time.Duration
	registry  string
	timeout   time.Duration
	grace     time.Duration
	verbose   bool
	secret    bool
	tls       bool
	program   string
	args      []string
	given     map[string]bool // the flags set on the command line, by name
}

const usageHead = `usage: ibis-run -np N [flags] [--] PROGRAM [ARGS...]

Runs N copies of PROGRAM as one Ibis pool on this machine, with an embedded registry,
output lines prefixed by launch index, and all processes stopped when one fails.

Flags:
`

// parseArgs parses ibis-run's command line. Help output goes to w. It returns flag.ErrHelp
// for -h, and an error matching errUsage for anything else it cannot accept.
func parseArgs(args []string, w io.Writer) (settings, error) {
	var s settings
	fs := flag.NewFlagSet("ibis-run", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by run; -h prints the usage below
	fs.IntVar(&s.np, "np", 0, "number of processes to start (required, 1 to "+strconv.Itoa(maxProcs)+")")
	fs.StringVar(&s.impl, "impl", "", "Ibis implementation for every process (sets IBIS_IMPL)")
	fs.StringVar(&s.pool, "pool", "", "pool name (sets IBIS_POOL; default a fresh random name)")
	fs.DurationVar(&s.heartbeat, "heartbeat", 0, "the embedded registry's heartbeat interval, e.g. 500ms (sets IBIS_HEARTBEAT; default the registry's; not with -registry)")
	fs.DurationVar(&s.death, "death-timeout", 0, "how long a silent process may stay a member of the embedded registry's pool, e.g. 60s (sets IBIS_DEATH_TIMEOUT; default the registry's, 30s; not with -registry)")
	fs.StringVar(&s.registry, "registry", "", "host:port of an external registry server, or a comma-separated list of its front ends (default: start one in-process on 127.0.0.1)")
	fs.DurationVar(&s.timeout, "timeout", 0, "stop everything after this long and exit with status 124 (0: no limit)")
	fs.DurationVar(&s.grace, "grace", launch.DefaultGrace, "time between SIGTERM and SIGKILL when stopping processes")
	fs.BoolVar(&s.verbose, "v", false, "log what ibis-run does to stderr")
	fs.StringVar(&s.metrics, "metrics", "", "serve the embedded registry's statistics for Prometheus at http://`HOST:PORT`/metrics (port 0: any free one)")
	fs.BoolVar(&s.secret, "secret", false,
		"close the pool with a fresh random secret, in a private file named by IBIS_POOL_SECRET_FILE (needs the embedded registry)")
	fs.BoolVar(&s.tls, "tls", false,
		"encrypt the pool with TLS: a throw-away CA and certificate, named by IBIS_TLS_CERT/KEY/CA (needs the embedded registry)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, w)
			return s, err
		}
		return s, fmt.Errorf("%w: %w", errUsage, err)
	}
	s.given = make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { s.given[f.Name] = true })
	rest := fs.Args()
	if len(rest) == 0 {
		return s, fmt.Errorf("%w: no PROGRAM given", errUsage)
	}
	s.program, s.args = rest[0], rest[1:]
	if err := s.check(); err != nil {
		return s, fmt.Errorf("%w: %w", errUsage, err)
	}
	return s, nil
}

// check rejects values that cannot work, with a message naming the flag.
func (s *settings) check() error {
	switch {
	case s.np < 1:
		return fmt.Errorf("-np %d: need at least 1 process (and -np is required)", s.np)
	case s.np > maxProcs:
		return fmt.Errorf("-np %d: at most %d processes", s.np, maxProcs)
	case s.heartbeat < 0:
		return fmt.Errorf("-heartbeat %v: must not be negative", s.heartbeat)
	case s.death < 0:
		return fmt.Errorf("-death-timeout %v: must not be negative", s.death)
	case s.timeout < 0:
		return fmt.Errorf("-timeout %v: must not be negative", s.timeout)
	case s.grace < 0:
		return fmt.Errorf("-grace %v: must not be negative", s.grace)
	case s.program == "":
		return errors.New("empty PROGRAM name")
	}
	if err := checkName("-impl", s.impl); err != nil {
		return err
	}
	if s.impl == "mp" {
		// Its processes would each be an MPI singleton: pools of one, each its own root.
		return errors.New("-impl mp: MPI processes are started by mpirun or srun, not ibis-run (mpirun -np 4 ./PROGRAM -impl mp)")
	}
	if err := checkName("-pool", s.pool); err != nil {
		return err
	}
	if s.registry != "" && s.metrics != "" {
		return errors.New("-metrics with -registry: the metrics are the embedded registry's; an ibis-registry serves its own (ibis-registry -metrics)")
	}
	// Only the registry uses them: the processes learn the heartbeat from the one they join.
	for _, name := range []string{"heartbeat", "death-timeout"} {
		if s.registry != "" && s.given[name] {
			return fmt.Errorf("-%s with -registry: it configures the registry that ibis-run starts; "+
				"an external registry has its own (ibis-registry -%s)", name, name)
		}
	}
	if s.registry != "" {
		if err := checkRegistry(s.registry); err != nil {
			return fmt.Errorf("-registry %q: %w", s.registry, err)
		}
		// The external registry knows neither a secret made up here nor a CA made up here.
		if s.secret {
			return errors.New("-secret makes up a secret that an external -registry does not know; " +
				"give the pool's secret in IBIS_POOL_SECRET_FILE instead")
		}
		if s.tls {
			return errors.New("-tls makes up a CA that an external -registry does not trust; " +
				"give the pool's certificates in IBIS_TLS_CERT, IBIS_TLS_KEY and IBIS_TLS_CA instead")
		}
	}
	return nil
}

// checkName accepts an empty (unset) value or one that survives the trip through the
// environment and the registry unchanged.
func checkName(flagName, v string) error {
	switch {
	case v == "":
		return nil
	case strings.TrimSpace(v) != v:
		return fmt.Errorf("%s %q: leading or trailing white space", flagName, v)
	case strings.ContainsRune(v, 0):
		return fmt.Errorf("%s %q: contains a NUL byte", flagName, v)
	case len(v) > registry.MaxPoolName:
		return fmt.Errorf("%s: %d bytes, at most %d", flagName, len(v), registry.MaxPoolName)
	}
	return nil
}

// checkRegistry accepts a registry address as registry.Join takes it (host:port, or a
// comma-separated list of front ends), every host named.
func checkRegistry(list string) error {
	addrs, err := registry.ParseAddrs(list)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if err := checkAddr(a); err != nil {
			if len(addrs) > 1 {
				return fmt.Errorf("%s: %w", a, err)
			}
			return err
		}
	}
	return nil
}

// checkAddr accepts host:port with a numeric port from 1 to 65535.
func checkAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want host:port: %w", err)
	}
	if host == "" {
		return errors.New("want host:port: missing host")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q: want a number from 1 to 65535", port)
	}
	return nil
}

func printUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, usageHead)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}
