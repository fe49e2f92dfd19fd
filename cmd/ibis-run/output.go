package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"syscall"
)

// exitOutputGone is the exit status after the reader of ibis-run's output went away
// (ibis-run ... | head): 128+SIGPIPE, what a shell reports for a program that such a write
// killed, so that a pipeline reads the same as with any other producer.
const exitOutputGone = 128 + int(syscall.SIGPIPE)

// outputError is the cause given to run's context when ibis-run can no longer write the
// processes' output (or its own messages): a pipe's reader has gone, or a file takes no
// more. run then stops the processes as on SIGTERM and exits with code.
type outputError struct {
	stream string // "standard output" or "standard error"
	err    error
}

func (e *outputError) Error() string {
	msg := fmt.Sprintf("cannot write to %s: %v", e.stream, e.err)
	if errors.Is(e.err, syscall.EPIPE) {
		msg += " (its reader has gone)"
	}
	return msg
}

func (e *outputError) Unwrap() error { return e.err }

// code is the exit status: exitOutputGone for a reader that has gone, exitFailure for any
// other write error (ibis-run could not do its job).
func (e *outputError) code() int {
	if errors.Is(e.err, syscall.EPIPE) {
		return exitOutputGone
	}
	return exitFailure
}

// outputGuard is ibis-run's standard output or error as run writes to it. The first write
// that fails cancels run's context with an *outputError, which stops the processes, and from
// then on the guard drops what it is given and reports success: were the processes' copiers
// told, their pipes would close and each process would die of SIGPIPE on its own, before
// the stop reaches its whole process group (what it started itself would be left running).
type outputGuard struct {
	w      io.Writer
	stream string
	stop   context.CancelCauseFunc
	failed atomic.Bool
}

func newOutputGuard(w io.Writer, stream string, stop context.CancelCauseFunc) *outputGuard {
	return &outputGuard{w: w, stream: stream, stop: stop}
}

// Write writes p, or drops it after a failed write; it never fails.
func (g *outputGuard) Write(p []byte) (int, error) {
	if g.failed.Load() {
		return len(p), nil
	}
	if _, err := g.w.Write(p); err != nil && g.failed.CompareAndSwap(false, true) {
		g.stop(&outputError{stream: g.stream, err: err})
	}
	return len(p), nil
}
