package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/ibisgo/ibis/internal/launch"
	"github.com/ibisgo/ibis/internal/metrics"
	"github.com/ibisgo/ibis/registry"
)

// Exit statuses of ibis-run itself (and exitOutputGone, output.go); otherwise it exits with
// the failed process's status.
const (
	exitOK       = 0
	exitFailure  = 1   // ibis-run could not do its job (registry, start failure)
	exitUsage    = 2   // bad command line
	exitTimeout  = 124 // -timeout expired, as timeout(1)
	exitNotExec  = 126 // PROGRAM is not executable, as a shell
	exitNotFound = 127 // PROGRAM not found, as a shell
)

// run is ibis-run without the process-wide parts (signals, os.Exit), so tests can call it:
// it parses args, starts the registry and the pool, waits, and returns the exit status. When
// ctx ends, the pool is stopped; if its cause is a *signalError the status is 128+signal.
// A failed write to stdout or stderr stops the pool too (outputGuard).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	stdout = newOutputGuard(stdout, "standard output", stop)
	errOut := launch.NewLockedWriter(newOutputGuard(stderr, "standard error", stop))
	s, err := parseArgs(args, errOut)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(errOut, "ibis-run: %v\nrun 'ibis-run -h' for usage\n", err)
		return exitUsage
	}
	log := zap.NewNop()
	if s.verbose {
		log = newLogger(errOut)
	}
	defer func() { _ = log.Sync() }() // nothing to do about a failed flush of stderr

	trust, err := setupTrust(s, os.Getenv)
	if err != nil {
		fmt.Fprintf(errOut, "ibis-run: %v\n", err)
		return exitFailure
	}
	if trust.secured != "" {
		fmt.Fprintf(errOut, "ibis-run: the pool is %s\n", trust.secured)
	}
	if trust.dir != "" {
		defer func() {
			if err := os.RemoveAll(trust.dir); err != nil {
				fmt.Fprintf(errOut, "ibis-run: removing %s: %v\n", trust.dir, err)
			}
		}()
	}

	regAddr := s.registry
	var srv *registry.Server
	if regAddr == "" {
		// Every process of the pool joins from this machine: let them all in.
		opts := []registry.ServerOption{registry.WithServerLogger(log.Named("registry")),
			registry.WithMaxMembersPerSource(max(s.np, registry.DefaultMaxMembersPerSource))}
		opts = append(opts, trust.options...)
		if s.heartbeat > 0 {
			opts = append(opts, registry.WithHeartbeatInterval(s.heartbeat))
		}
		if s.death > 0 {
			opts = append(opts, registry.WithDeathTimeout(s.death))
		}
		srv, err = registry.StartEmbedded("127.0.0.1:0", opts...)
		if err != nil {
			fmt.Fprintf(errOut, "ibis-run: cannot start the embedded registry: %v\n", err)
			return exitFailure
		}
		regAddr = srv.Addr()
		if s.metrics != "" {
			ms, err := metrics.Serve(s.metrics, srv.Stats)
			if err != nil {
				_ = srv.Close()
				fmt.Fprintf(errOut, "ibis-run: %v\n", err)
				return exitFailure
			}
			defer func() { _ = ms.Close() }()
			fmt.Fprintf(errOut, "ibis-run: metrics on http://%s/metrics\n", ms.Addr())
		}
	}
	code := runPool(ctx, s, regAddr, trust, stdout, errOut, log)
	if srv != nil {
		if err := srv.Close(); err != nil {
			fmt.Fprintf(errOut, "ibis-run: closing the embedded registry: %v\n", err)
		}
	}
	return code
}

// runPool starts the processes, supervises them until they end and returns the exit status.
func runPool(ctx context.Context, s settings, regAddr string, trust poolTrust, stdout io.Writer, errOut *launch.LockedWriter, log *zap.Logger) int {
	pe := poolEnv{registry: regAddr, pool: s.pool, size: s.np, impl: s.impl, extra: trust.set, drop: trust.drop}
	if pe.pool == "" {
		pe.pool = randomPoolName()
	}
	if s.heartbeat > 0 {
		pe.heartbeat = s.heartbeat.String()
	}
	if s.death > 0 {
		pe.death = s.death.String()
	}
	log.Info("starting pool", zap.String("program", s.program), zap.Strings("args", s.args),
		zap.Int("np", s.np), zap.String("registry", regAddr), zap.String("pool", pe.pool),
		zap.Bool("secret", s.secret), zap.Bool("tls", s.tls))

	if err := ctx.Err(); err != nil {
		fmt.Fprintf(errOut, "ibis-run: %v before start\n", context.Cause(ctx))
		return interruptedCode(context.Cause(ctx))
	}
	g, err := launch.Start(launch.Spec{Program: s.program, Args: s.args, N: s.np},
		launch.WithEnv(childEnv(os.Environ(), pe)),
		launch.WithStdout(stdout), launch.WithStderr(errOut),
		launch.WithGrace(s.grace), launch.WithLogger(log.Named("launch")),
		launch.WithOnFailure(func(ce *launch.ChildError) {
			msg := ce.Error()
			if s.np > 1 {
				msg += "; stopping the other processes"
			}
			fmt.Fprintf(errOut, "ibis-run: %s\n", msg)
		}))
	if err != nil {
		fmt.Fprintf(errOut, "ibis-run: %v\n", err)
		return startFailureCode(err)
	}

	statuses, stopCode, waitErr := awaitPool(ctx, g, s.timeout, errOut)
	var ce *launch.ChildError
	var oe *outputError
	switch {
	case waitErr == nil && errors.As(context.Cause(ctx), &oe):
		// The processes succeeded, but what they wrote from the failed write on is lost.
		if stopCode < 0 {
			fmt.Fprintf(errOut, "ibis-run: %v; the rest of the processes' output was dropped\n", oe)
		}
		return oe.code()
	case waitErr == nil:
		log.Info("all processes succeeded", zap.Int("np", len(statuses)))
		return exitOK
	case errors.As(waitErr, &ce):
		// Reported by the failure hook the moment it happened.
		log.Info("pool failed", zap.Int("rank", ce.Status.Index), zap.Int("code", ce.Status.Code()))
		return ce.Status.Code()
	case errors.Is(waitErr, launch.ErrStopped) && stopCode >= 0:
		return stopCode
	default:
		fmt.Fprintf(errOut, "ibis-run: %v\n", waitErr)
		return exitFailure
	}
}

// awaitPool waits until every process of g has ended, stopping them when ctx ends or the
// timeout (if positive) expires. stopCode is the exit status for such a stop, -1 if there was
// none; waitErr is the group's Wait error.
func awaitPool(ctx context.Context, g *launch.Group, timeout time.Duration, errOut io.Writer) (statuses []launch.Status, stopCode int, waitErr error) {
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		statuses, waitErr = g.Wait()
	}()
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	stopCode = -1
	select {
	case <-waited:
	case <-ctx.Done():
		fmt.Fprintf(errOut, "ibis-run: %v; stopping the processes\n", context.Cause(ctx))
		stopCode = interruptedCode(context.Cause(ctx))
		g.Stop()
		<-waited
	case <-expired:
		fmt.Fprintf(errOut, "ibis-run: timeout after %v; stopping the processes\n", timeout)
		stopCode = exitTimeout
		g.Stop()
		<-waited
	}
	return statuses, stopCode, waitErr
}

// interruptedCode is the exit status after ctx ended with the given cause: a
// *signalError's or an *outputError's code, else exitFailure.
func interruptedCode(cause error) int {
	var c interface{ code() int }
	if errors.As(cause, &c) {
		return c.code()
	}
	return exitFailure
}

// startFailureCode maps a launch.Start error to the status a shell would give.
func startFailureCode(err error) int {
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return exitNotFound
	case errors.Is(err, fs.ErrPermission):
		return exitNotExec
	default:
		return exitFailure
	}
}

// newLogger returns the -v logger: human-readable lines on ibis-run's stderr, through the same
// lock as the processes' stderr lines so that the two never mix within a line.
func newLogger(w *launch.LockedWriter) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.TimeKey = "" // the lines are read next to the processes' output, not archived
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(w), zapcore.DebugLevel)
	return zap.New(core).Named("ibis-run")
}
