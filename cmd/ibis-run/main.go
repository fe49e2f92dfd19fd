package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	// With SIGPIPE caught, a write to a pipe whose reader has gone (ibis-run ... | head)
	// fails with EPIPE instead of killing ibis-run, which then stops the pool and cleans up
	// (outputGuard). Caught, not ignored: the processes would inherit an ignored SIGPIPE.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	go func() {
		// The first signal stops the pool; later ones are absorbed while it stops, so
		// ibis-run outlives its processes and can report how they ended.
		cancel(&signalError{sig: <-sigs})
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// signalError is the cause given to run's context when ibis-run receives a signal; run exits
// with 128 plus its number, as a shell reports a process killed by that signal.
type signalError struct{ sig os.Signal }

func (e *signalError) Error() string { return fmt.Sprintf("received %v", e.sig) }

// code is the exit status for an interrupted run.
func (e *signalError) code() int {
	if s, ok := e.sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}
