// Command vcluster builds a virtual cluster of network namespaces on this machine and runs
// commands on it (internal/vcluster); scripts/vcluster.sh builds and runs it. There is one
// such cluster at a time, with id ivc-cli (or $IBIS_VCLUSTER_ID, so that a benchmark script
// keeps its own cluster beside someone else's); it stays up between commands until `down`.
//
//	vcluster up [-hosts 4] [-rate 1gbit] [-slurm] [-cpus 8] [-subnet 1]
//	vcluster up -sites 4 -hosts-per-site 4 [-wan-delay 10ms] [-wan-rate 100mbit] [-wan-loss 0.1%]
//	            [-firewall 2,4] [-nat 3] [-rate ...] [-slurm] [-cpus 8]
//	vcluster exec h2 -- CMD ARGS...
//	vcluster wan down|up SITE | wan set SITE DELAY LOSS | wan stats
//	vcluster wancheck [-n 50] [-bytes 20000000] FROM TO
//	vcluster srun [-host h1] -- SRUN-ARGS...
//	vcluster mpirun -np 4 -- CMD ARGS...
//	vcluster status
//	vcluster down
//
// It needs root. An `up` interrupted (SIGINT, SIGTERM) removes what it made; `down` removes
// everything of the cluster, also of an `up` killed with SIGKILL.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/ibisgo/ibis/internal/vcluster"
)

// id is the command's cluster (a test changes it; IBIS_VCLUSTER_ID overrides it).
var id = "ivc-cli"

// envID names another cluster for the command than ivc-cli: "ivc-" and letters and digits.
const envID = "IBIS_VCLUSTER_ID"

// persist hands the cluster built by up over to later commands; a test turns it off, so that
// its cluster stays its own and is swept should the test be killed.
var persist = true

const usage = `usage: vcluster COMMAND [FLAGS] [-- ARGS]
  up [-hosts 4] [-rate 1gbit] [-slurm] [-cpus 8] [-subnet 1]   build the cluster (root)
  up -sites 4 -hosts-per-site 4 [-wan-delay 10ms] [-wan-rate 100mbit] [-wan-loss 0.1%]
     [-firewall 2,4] [-nat 3] ...  build a grid of sites joined by an emulated wide area
  exec HOST -- CMD ARGS...        run a command on host HOST (h1 .. hN)
  wan down|up SITE                take site SITE's wide-area link down or up again
  wan set SITE DELAY LOSS         change its delay and loss (e.g. wan set 2 20ms 1%)
  wan stats                       print the link emulator's counters (JSON)
  wancheck [-n 50] [-bytes 20000000] FROM TO
                                  measure round trips and a bulk transfer FROM -> TO
  srun [-host h1] -- ARGS...      run srun on HOST with the cluster's SLURM_CONF
  mpirun -np N -- CMD ARGS...     run mpirun on h1 across the hosts
  status                          print the hosts, SLURM_CONF and node states
  down                            remove the cluster and everything on it
`

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "exec" || os.Args[1] == "srun" || os.Args[1] == "mpirun") {
		// The command gets the terminal's signals itself (same process group); this
		// process waits for it and passes its exit code on.
		signal.Ignore(syscall.SIGINT, syscall.SIGQUIT)
	}
	if v := os.Getenv(envID); v != "" {
		id = v
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "up", "down", "status", "exec", "srun", "mpirun", "wan", "wancheck":
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "vcluster: unknown command %q\n%s", args[0], usage)
		return 2
	}
	if os.Geteuid() != 0 {
		fmt.Fprintf(stderr, "vcluster %s: needs root (it makes network namespaces and starts daemons in them)\n", args[0])
		return 1
	}
	var err error
	code := 0
	switch args[0] {
	case "up":
		err = up(args[1:], stdout)
	case "down":
		err = vcluster.Remove(id)
		if err == nil {
			fmt.Fprintln(stdout, "vcluster: down")
		}
	case "status":
		err = status(stdout)
	case "exec", "srun", "mpirun":
		code, err = runOn(args[0], args[1:], stdout, stderr)
	case "wan":
		err = wan(args[1:], stdout)
	case "wancheck":
		err = wancheck(args[1:], stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "vcluster %s: %v\n", args[0], err)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, usage)
		}
		return 1
	}
	return code
}

func up(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	hosts := fs.Int("hosts", 4, "number of hosts, h1 .. hN")
	rate := fs.String("rate", "", "rate limit per link, e.g. 1gbit or 100mbit (tc tbf); none when empty")
	slurm := fs.Bool("slurm", false, "start SLURM: slurmctld on h1, slurmd on every host")
	cpus := fs.Int("cpus", vcluster.DefaultCPUs, "CPUs per host, for SLURM and mpirun's slots")
	subnet := fs.Int("subnet", 1, "S of the hosts' addresses 10.203.S.N")
	grid := gridFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	opts := []vcluster.Option{vcluster.WithID(id), vcluster.WithHosts(*hosts), vcluster.WithCPUs(*cpus), vcluster.WithSubnet(*subnet)}
	if *rate != "" {
		r, err := vcluster.ParseRate(*rate)
		if err != nil {
			return err
		}
		opts = append(opts, vcluster.WithRate(r))
	}
	if *slurm {
		opts = append(opts, vcluster.WithSlurm())
	}
	gopts, err := grid.options()
	if err != nil {
		return err
	}
	opts = append(opts, gopts...)
	if _, err := vcluster.Attach(id); err == nil {
		return fmt.Errorf("cluster %s is up already; `vcluster down` first", id)
	}
	// An interrupt ends Up, which then removes what it made.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	c, err := vcluster.Up(ctx, opts...)
	if err != nil {
		return err
	}
	if persist {
		if err := c.Persist(); err != nil {
			return errors.Join(err, c.Close())
		}
	}
	return status(stdout)
}

func status(w io.Writer) error {
	c, err := vcluster.Attach(id)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "cluster %s (state in %s)\n", c.ID(), c.Dir())
	for _, h := range c.Hosts() {
		fmt.Fprintf(w, "  %-4s %-15s namespace %s", h.Name, h.Addr, h.Namespace)
		if h.Site > 0 {
			fmt.Fprintf(w, " site s%d", h.Site)
		}
		fmt.Fprintln(w)
	}
	for _, s := range c.Sites() {
		fmt.Fprintf(w, "site %s: %s, hosts %s, gateway %s, public address %s", s.Name, s.Prefix,
			strings.Join(s.Hosts, ","), s.GatewayAddr, s.PublicAddr)
		if s.Firewall {
			fmt.Fprint(w, ", firewall")
		}
		if s.NAT {
			fmt.Fprint(w, ", NAT")
		}
		fmt.Fprintln(w)
	}
	if len(c.Sites()) > 0 {
		st, err := c.WANStats(context.Background())
		if err != nil {
			return err
		}
		for _, s := range st.Sites {
			fmt.Fprintf(w, "wide-area link of %s: delay %v, loss %g%%, down %v\n", s.Name, s.Delay, s.Loss*100, s.Down)
		}
	}
	if conf := c.SlurmConf(); conf != "" {
		fmt.Fprintf(w, "SLURM_CONF=%s\n", conf)
		cmd := c.Slurm(context.Background(), "h1", "sinfo", "-N")
		cmd.Stdout, cmd.Stderr = w, w
		return cmd.Run()
	}
	return nil
}

// runOn runs exec, srun or mpirun in the foreground and returns its exit code.
func runOn(what string, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet(what, flag.ContinueOnError)
	host := "h1"
	np := 0
	switch what {
	case "srun":
		fs.StringVar(&host, "host", "h1", "host to run srun on")
	case "mpirun":
		fs.IntVar(&np, "np", 0, "number of ranks")
	case "exec":
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			return 0, errors.New("want a host: exec HOST -- CMD ARGS")
		}
		host, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return 0, err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return 0, fmt.Errorf("nothing to run: %s ... -- CMD ARGS", what)
	}
	if what == "mpirun" && np < 1 {
		return 0, errors.New("want -np N, N at least 1")
	}
	c, err := vcluster.Attach(id)
	if err != nil {
		return 0, err
	}
	var cmd *exec.Cmd
	ctx := context.Background()
	switch what {
	case "exec":
		cmd = c.Command(ctx, host, rest[0], rest[1:]...)
	case "srun":
		cmd = c.Srun(ctx, host, rest...)
	case "mpirun":
		cmd = c.MPIRun(ctx, np, rest[0], rest[1:]...)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ee.ExitCode() < 0 {
			return 128 + 9, nil
		}
		return ee.ExitCode(), nil
	}
	return 0, err
}
