// Command joinprobe measures how long a closed-world pool takes to form: it joins the
// pool its launcher describes (srun, mpirun, ibis-run or IBIS_*), waits until every
// member has joined, and prints one line with the times since the launch began:
//
//	joinprobe-result rank=R size=N started=SECONDS joined=SECONDS closed=SECONDS
//
// started is when this process began (what the launcher took), joined when its ipl.New
// returned, closed when it saw the pool complete; the largest closed of a run is the
// pool's join time. The launch began at
// $IBIS_JOINPROBE_T0 (Unix time in nanoseconds, set by the script just before it calls
// srun; every host of the virtual cluster shares the machine's clock), else when this
// process started. scripts/cluster-bench.sh uses it (docs/CLUSTERS.md, Figures).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/ibisgo/ibis/ipl"

	_ "github.com/ibisgo/ibis/impl/nio" // -impl nio
	_ "github.com/ibisgo/ibis/impl/tcp" // the default
)

// envT0 holds the launch's start, Unix time in nanoseconds.
const envT0 = "IBIS_JOINPROBE_T0"

// errUsage marks a bad flag or setting.
var errUsage = errors.New("joinprobe: usage")

func main() {
	start := time.Now()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, start, os.Args[1:], os.Getenv(envT0), os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "joinprobe:", err)
		os.Exit(1)
	}
}

// run joins the pool, waits until it is complete and prints the result line to stdout.
func run(ctx context.Context, start time.Time, args []string, t0 string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("joinprobe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	opts := ipl.Flags(fs)
	timeout := fs.Duration("timeout", 2*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q: joinprobe takes only flags", errUsage, fs.Arg(0))
	}
	if *timeout <= 0 {
		return fmt.Errorf("%w: -timeout %v: must be positive", errUsage, *timeout)
	}
	begin, err := launchStart(t0, start)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	ib, err := ipl.New(ctx, opts()...)
	if err != nil {
		return err
	}
	joined := time.Since(begin)
	reg := ib.Registry()
	if reg.PoolSize() == 0 {
		return errors.Join(errors.New("an open pool has no join time: start joinprobe under srun, mpirun or ibis-run, or set "+
			ipl.EnvPoolSize), ib.Close())
	}
	if err := reg.WaitUntilPoolClosed(ctx); err != nil {
		return errors.Join(err, ib.Close())
	}
	closed := time.Since(begin)
	fmt.Fprintf(stdout, "joinprobe-result rank=%d size=%d started=%.6f joined=%.6f closed=%.6f\n",
		ipl.LaunchRank(), reg.PoolSize(), start.Sub(begin).Seconds(), joined.Seconds(), closed.Seconds())
	return ib.Close()
}

// launchStart parses $IBIS_JOINPROBE_T0; empty means the process's own start.
func launchStart(t0 string, start time.Time) (time.Time, error) {
	if t0 == "" {
		return start, nil
	}
	ns, err := strconv.ParseInt(t0, 10, 64)
	if err != nil || ns <= 0 {
		return time.Time{}, fmt.Errorf("%w: %s=%q: want Unix time in nanoseconds (date +%%s%%N)", errUsage, envT0, t0)
	}
	t := time.Unix(0, ns)
	if t.After(start) {
		return time.Time{}, fmt.Errorf("%w: %s=%q lies after this process started", errUsage, envT0, t0)
	}
	return t, nil
}
