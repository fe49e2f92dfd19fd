// Command ibis-load is a load program for the reliability of many-to-one ports: the
// processes of a pool elect a receiver, every other process sends numbered messages into
// the receiver's one many-to-one port from one or more send ports, and the receiver, a
// consumer that may be made slow on purpose, checks that nothing was lost, that every
// send port's messages came in the order they were sent (FIFO per sender) and that their
// content is right. It reports what it received, the rate and the peak resident memory
// (VmHWM) of the receiver and of the senders, as one line on stdout (and one JSON line
// with -json), and exits non-zero if anything was lost, reordered, duplicated or damaged.
//
// It is a benchmark, not a test: run it under ibis-run with the implementation and
// flavour to load, for example 8 senders of 200,000 small messages each into a
// consumer that sleeps 2µs per message, over nio with non-blocking receive:
//
//	go run ./cmd/ibis-run -np 9 -impl nio -- go run ./cmd/ibis-load \
//		-messages 200000 -values 8 -consume-delay 2us -property nio.receive=nonblocking
//
// Figures for this machine are in docs/reliability-load.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // an error: a sender or the receiver could not do its part
	exitUsage   = 2 // bad command line
	exitLoss    = 3 // the receiver saw a message lost, reordered, duplicated or damaged
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code := mainCode(ctx, flag.CommandLine, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// mainCode parses args on fs (the Ibis flags included), runs this process's part of the
// load and returns the exit status. Results go to stdout, diagnostics to stderr.
func mainCode(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) int {
	fs.SetOutput(stderr)
	s := newSettings(fs)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	if err := s.validate(); err != nil {
		fmt.Fprintf(stderr, "ibis-load: %v\n", err)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return runProcess(ctx, s, stdout, stderr)
}
