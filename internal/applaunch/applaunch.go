// Package applaunch starts a local pool for the applications' -np flag (apps/sor,
// apps/barneshut): an embedded registry and np copies of the running executable with the
// environment cmd/ibis-run gives its processes (ServerOptions also configures the registry
// of ibis-bench's own peers). internal/launch, the launcher of cmd/ibis-run and ibis-bench,
// does more (output prefixes, process groups); the applications need only this.
package applaunch

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// Exit statuses of Local besides a failed process's own.
const (
	exitOK      = 0
	exitFailure = 1
	exitTimeout = 124 // ctx's deadline (the applications' -timeout) passed, as timeout(1)
)

// envRank is the launch index, as cmd/ibis-run sets it; mpj takes it as the rank.
const envRank = "IBIS_RANK"

// Local is -np: it starts an embedded registry and np copies of this executable with the
// environment cmd/ibis-run gives its processes (registry, a fresh pool name, the pool size
// and the launch index), waits for them, and returns the first failure's exit status. When
// one fails or ctx ends, the others get SIGTERM; when the launcher is killed outright, the
// kernel kills them (Linux). Interrupted by SIGINT or SIGTERM, it returns 128 plus the
// signal's number (130 for Ctrl-C), as cmd/ibis-run does; stopped by ctx's deadline (the
// applications' -timeout), it says so and returns 124, as timeout(1) and ibis-run do.
// name prefixes its messages and the pool's name. The processes write to stdout and
// stderr unprefixed: the applications print results on rank 0 only, and their errors
// name their rank.
//
// With bind, and when there are at least np CPUs to run on (Linux), process k is bound to
// the k-th of them, as mpirun binds ranks to cores by default: left to itself the kernel
// moves compute-bound processes and their runtime threads between cores, and a rank that
// shares a core for a moment delays every other rank at the next exchange (for SOR on two
// cores, 1.9 s unbound against 1.4 s bound; docs/SOR.md). With more processes than CPUs
// nothing is bound, as with mpirun --oversubscribe.
//
// WithLossTolerated (the divide-and-conquer applications) lets the others go on when one
// fails after every process has joined the pool.
func Local(ctx context.Context, name string, np int, args []string, stdout, stderr io.Writer, bind bool, opts ...Option) int {
	var o options
	for _, f := range opts {
		f(&o)
	}
	sopts, err := ServerOptions(np)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return exitFailure
	}
	srv, err := registry.StartEmbedded("127.0.0.1:0", sopts...)
	if err != nil {
		fmt.Fprintf(stderr, "%s: cannot start the embedded registry: %v\n", name, err)
		return exitFailure
	}
	defer func() { _ = srv.Close() }() // the processes are gone; nothing waits for it
	// The processes see the same flags; the last -np wins and makes them join the pool.
	childArgs := append(append([]string(nil), args...), "-np=0")
	pool := name + "-" + strings.ToLower(rand.Text()[:16])

	intr := watchInterrupts()
	outer := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type exit struct {
		rank int
		c    *selfexec.Child
		err  error
	}
	done := make(chan exit, np)
	timedOut := false // the first failure came after ctx's deadline had passed
	cpus := allowedCPUs()
	bound := bind && np <= len(cpus)
	started := 0
	for rank := range np {
		opts := []selfexec.Option{
			// The launcher's own pool (ibis-run's, or a launch of one process: CheckFlags
			// refuses more) gives way to the new one.
			selfexec.WithoutEnv(ipl.EnvRegistry+"=", ipl.EnvPool+"=", ipl.EnvPoolSize+"=", envRank+"="),
			selfexec.WithEnv(ipl.EnvRegistry+"="+srv.Addr(), ipl.EnvPool+"="+pool,
				ipl.EnvPoolSize+"="+strconv.Itoa(np), envRank+"="+strconv.Itoa(rank)),
			selfexec.WithStdout(stdout), selfexec.WithStderr(stderr),
			// A launcher killed outright (SIGKILL) takes its processes with it.
			selfexec.WithParentDeathSignal(syscall.SIGKILL),
		}
		if bound {
			cpu := cpus[rank]
			opts = append(opts, selfexec.WithStart(func(cmd *exec.Cmd) error { return startOn(cmd, cpu) }))
		}
		c, err := selfexec.Start(ctx, childArgs, opts...)
		if err != nil {
			if timedOut = errors.Is(outer.Err(), context.DeadlineExceeded); !timedOut {
				fmt.Fprintf(stderr, "%s: starting process %d: %v\n", name, rank, err)
			}
			cancel()
			break
		}
		started++
		go func() { done <- exit{rank, c, c.Wait()} }()
	}
	code := exitOK
	if started < np {
		code = exitFailure
	}
	var ok, lost, lostCode int
	for left := started; left > 0; {
		e := <-done
		left-- // still running besides: left
		e.c.Close()
		if e.err == nil {
			ok++
		}
		if e.err == nil || code != exitOK {
			continue
		}
		if o.tolerate && ctx.Err() == nil && srv.Stats().Joins >= uint64(np) {
			// The pool had formed: the others go on without this one.
			if lost++; lost == 1 {
				lostCode = exitCode(e.c)
			}
			if left > 0 {
				fmt.Fprintf(stderr, "%s: process %d failed (%v); the others go on without it\n", name, e.rank, e.err)
			} else {
				fmt.Fprintf(stderr, "%s: process %d failed (%v)\n", name, e.rank, e.err)
			}
			continue
		}
		code = exitFailure
		if ec := e.c.ExitCode(); ec > 0 {
			code = ec
		}
		timedOut = errors.Is(outer.Err(), context.DeadlineExceeded)
		if ctx.Err() == nil {
			fmt.Fprintf(stderr, "%s: process %d failed (%v); stopping the others\n", name, e.rank, e.err)
		}
		cancel()
	}
	if sig, ok := intr.stop(); ok {
		fmt.Fprintf(stderr, "%s: received %v; the processes were stopped\n", name, sig)
		return 128 + int(sig)
	}
	if timedOut {
		fmt.Fprintf(stderr, "%s: the time limit (-timeout) ran out; the processes were stopped\n", name)
		return exitTimeout
	}
	if lost > 0 && code == exitOK {
		if ok == 0 {
			return lostCode
		}
		fmt.Fprintf(stderr, "%s: %d of %d processes were lost; the others finished the run\n", name, lost, np)
	}
	return code
}

// exitCode is a failed process's exit status for Local's own: its own when it exited
// with one, else exitFailure (killed by a signal).
func exitCode(c *selfexec.Child) int {
	if ec := c.ExitCode(); ec > 0 {
		return ec
	}
	return exitFailure
}

// Option configures Local.
type Option func(*options)

type options struct {
	tolerate bool
}

// WithLossTolerated lets the other processes go on when one fails once every process
// has joined the pool, for programs that survive the loss of a member (dc runs the jobs
// of a lost process again; the root's loss fails the others on their own). Local then
// succeeds when at least one process succeeded and every failure came after the pool
// had formed; it says on stderr how many were lost. A failure before every process
// joined still stops the others: a closed-world pool would wait for ever.
func WithLossTolerated() Option { return func(o *options) { o.tolerate = true } }

// ServerOptions configures the registry a launcher starts for np local processes that
// inherit its environment: the pool secret (IBIS_POOL_SECRET or _FILE) and TLS
// (IBIS_TLS_CERT, _KEY, _CA) of that environment, which the processes will require of it
// (the checks are mutual), the heartbeat interval of IBIS_HEARTBEAT and the death timeout
// of IBIS_DEATH_TIMEOUT (as an instance's embedded registry takes them), and room for np
// members from this one address.
func ServerOptions(np int) ([]registry.ServerOption, error) {
	sopts := []registry.ServerOption{registry.WithMaxMembersPerSource(max(np, registry.DefaultMaxMembersPerSource))}
	if v := os.Getenv(ipl.EnvHeartbeat); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%s=%q: want a positive duration such as 500ms", ipl.EnvHeartbeat, v)
		}
		sopts = append(sopts, registry.WithHeartbeatInterval(d))
	}
	if v := os.Getenv(ipl.EnvDeathTimeout); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%s=%q: want a positive duration such as 30s", ipl.EnvDeathTimeout, v)
		}
		sopts = append(sopts, registry.WithDeathTimeout(d))
	}
	secret, err := poolauth.Load(os.Getenv(ipl.EnvPoolSecret), os.Getenv(ipl.EnvPoolSecretFile))
	if err != nil {
		return nil, fmt.Errorf("the pool secret: %w", err)
	}
	if secret.IsSet() {
		sopts = append(sopts, registry.WithServerSecret(secret.Bytes()))
	}
	if files := (tlsconf.Files{Cert: os.Getenv(ipl.EnvTLSCert), Key: os.Getenv(ipl.EnvTLSKey), CA: os.Getenv(ipl.EnvTLSCA)}); files.IsSet() {
		cfg, err := files.Server()
		if err != nil {
			return nil, fmt.Errorf("TLS: %w", err)
		}
		sopts = append(sopts, registry.WithServerTLS(cfg))
	}
	return sopts, nil
}

// CheckFlags refuses what cannot go with -np (set holds the flags given, impl the -impl
// value): -np starts its own registry and pool, so -registry, -pool and -pool-size have no
// place, MPI processes are started by mpirun, not by -np, and a process that a launcher
// started with others (mpirun -np 2 ./sor -np 2) would start a second pool of its own.
func CheckFlags(name string, set map[string]bool, impl string) error {
	for _, f := range []string{"registry", "pool", "pool-size"} {
		if set[f] {
			return fmt.Errorf("-%s with -np: -np starts its own registry and pool; leave -np out to join an existing pool", f)
		}
	}
	if impl == "mp" {
		return fmt.Errorf("-impl mp with -np: MPI processes are started by mpirun or srun (mpirun -np 4 ./%s -impl mp)", name)
	}
	if n := ipl.LaunchSize(); n > 1 {
		return fmt.Errorf("-np under a launch of %d processes (mpirun, srun or ibis-run): each would start a pool of its own; "+
			"leave -np out, the launcher starts the processes", n)
	}
	return nil
}
