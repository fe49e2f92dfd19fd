package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"sync"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
)

// env is what a subcommand's run function gets from the framework: the common
// settings parsed from the command line, a logger and a progress reporter.
type env struct {
	// Impl is the Ibis implementation asked for with -impl ("" picks the first whose
	// capabilities fit, today tcp).
	Impl string
	// Props are implementation properties given to every pool member (the nio
	// flavours: "nio.send", "nio.receive").
	Props map[string]string
	// Quiet is set by -q: no progress lines.
	Quiet bool
	// Log receives diagnostics; a no-op logger unless -v. It never writes to stdout.
	Log *zap.Logger
	// Progress prints a progress line on stderr, at most one every couple of
	// seconds and only once the run has lasted a few; a no-op with -q.
	Progress func(format string, a ...any)

	// pool says how network experiments find their peers (see pool.go).
	pool poolSettings
	// command is the subcommand's name and args its own arguments, both handed to the
	// peer processes the suite starts so that they run the same experiment.
	command string
	args    []string
	stderr  io.Writer
}

// command is one subcommand of ibis-bench.
type command struct {
	name, summary string
	// setup registers the subcommand's own flags and returns its run function. The run
	// function returns the report to print, or a nil report in a process that only
	// served as a peer (it prints nothing).
	setup func(fs *flag.FlagSet) func(ctx context.Context, e *env) (*report.Report, error)
}

var (
	commandsMu sync.Mutex
	commands   = map[string]*command{}
)

// register adds a subcommand; each subcommand's file calls it from init. A second
// registration under the same name is a programming error and panics at start-up.
func register(c *command) {
	commandsMu.Lock()
	defer commandsMu.Unlock()
	if c.name == "" || c.setup == nil {
		panic("ibis-bench: register needs a name and a setup function")
	}
	if _, dup := commands[c.name]; dup {
		panic("ibis-bench: subcommand " + c.name + " registered twice")
	}
	commands[c.name] = c
}

// lookup returns the named subcommand, or nil.
func lookup(name string) *command {
	commandsMu.Lock()
	defer commandsMu.Unlock()
	return commands[name]
}

// sortedCommands lists the subcommands by name, for the usage text.
func sortedCommands() []*command {
	commandsMu.Lock()
	defer commandsMu.Unlock()
	out := make([]*command, 0, len(commands))
	for _, c := range commands {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// usage writes the top-level help: what ibis-bench is and its subcommands.
func usage(w io.Writer) {
	fmt.Fprint(w, `ibis-bench: the Ibis-Go message-passing micro-benchmark suite.

Usage: ibis-bench SUBCOMMAND [flags]
       ibis-bench SUBCOMMAND -h      (the subcommand's flags)

Subcommands:
`)
	for _, c := range sortedCommands() {
		fmt.Fprintf(w, "  %-14s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Every subcommand takes -impl, -nio-send, -nio-receive, -json FILE, -plot FILE (.png or .svg,
where the subcommand draws curves: the first figure goes to FILE, any others to FILE-2, FILE-3,
... with the same extension, and each file written is named on stderr), -q, -v, and -registry/-pool/-pool-size to run inside a
pool started by someone else (for example ibis-run); without them the suite starts its own
peer processes. Tables go to stdout; logs and progress go to stderr.
`)
}
