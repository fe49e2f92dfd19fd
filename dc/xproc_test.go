package dc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ibisgo/ibis/dc"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// The environment of a child process.
const (
	envScenario = "DC_TEST_SCENARIO" // what the child runs: fib, kill, join, rootdie, stall, rootstall, regloss, foreign or stop
	envAlgo     = "DC_TEST_ALGO"
	envArg      = "DC_TEST_ARG"
)

// Lines a child prints for the test to act on.
const (
	lineHolding = "HOLDING"      // the doomed process holds a stolen job
	lineRunning = "ROOT RUNNING" // the root job has started
	lineSaw     = "SAW HOLDING"  // the root knows that the doomed process holds its job
)

// sawHolding is set in the root process once the doomed process holds its job.
var sawHolding atomic.Bool

// The kinds of job of the failure scenarios.
var (
	killRoot *dc.Kind[int, int64]
	hold     *dc.Kind[int, int64]
	joinRoot *dc.Kind[int, int64]
	await    *dc.Kind[int, int64]
	block    *dc.Kind[int, int64]
)

func init() {
	// kill: the root spawns n jobs; the one the doomed process steals never returns
	// there (the process is killed holding it); the others wait until it holds it.
	killRoot = dc.Define("test.kill", func(c *dc.Ctx, n int) int64 {
		return spawnSum(c, hold, n)
	})
	hold = dc.Define("test.hold", func(c *dc.Ctx, i int) int64 {
		reg := c.Ibis().Registry()
		if c.Site() == "doomed" {
			if _, err := reg.Elect(context.Background(), "doomed-holding"); err != nil {
				panic(err)
			}
			fmt.Println(lineHolding)
			<-c.Ibis().Done() // killed before
			return -1
		}
		// The election goes with its winner when it is killed: wait for it only until
		// it has been seen once.
		if !sawHolding.Load() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := reg.ElectionResult(ctx, "doomed-holding"); err != nil {
				panic(err)
			}
			sawHolding.Store(true)
			fmt.Println(lineSaw)
		}
		return int64(i * i)
	})
	// rootdie: the root job spawns two jobs; the worker steals one and waits in it for
	// the end of the run; the root runs the other, which says so once the worker holds
	// its job, and blocks until the root process is killed.
	block = dc.Define("test.block", func(c *dc.Ctx, depth int) int64 {
		if depth == 0 {
			a, b := block.Spawn(c, 1), block.Spawn(c, 1)
			c.Sync()
			return a.Value() + b.Value()
		}
		reg := c.Ibis().Registry()
		if c.Site() == "worker" {
			if _, err := reg.Elect(context.Background(), "worker-holds"); err != nil {
				panic(err)
			}
			<-c.Done()
			return 0
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := reg.ElectionResult(ctx, "worker-holds"); err != nil {
			panic(err)
		}
		fmt.Println(lineRunning)
		<-c.Ibis().Done()
		return 0
	})
	// join: the root spawns n jobs that all wait until the late joiner and the worker
	// have each run one, so that the run cannot end without either: a worker that
	// started slowly would otherwise join a run that had ended, or ask for the root's
	// election after the root had left with it.
	joinRoot = dc.Define("test.join", func(c *dc.Ctx, n int) int64 {
		fmt.Println(lineRunning)
		return spawnSum(c, await, n)
	})
	await = dc.Define("test.await", func(c *dc.Ctx, i int) int64 {
		reg := c.Ibis().Registry()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if site := c.Site(); site == "joiner" || site == "worker" {
			if _, err := reg.Elect(ctx, site+"-ran"); err != nil {
				panic(err)
			}
		}
		for _, e := range []string{"joiner-ran", "worker-ran"} {
			if _, err := reg.ElectionResult(ctx, e); err != nil {
				panic(err)
			}
		}
		return int64(i * i)
	})
}

// spawnSum spawns k(0) ... k(n-1) and adds their results.
func spawnSum(c *dc.Ctx, k *dc.Kind[int, int64], n int) int64 {
	fs := make([]*dc.Future[int64], n)
	for i := range fs {
		fs[i] = k.Spawn(c, i)
	}
	c.Sync()
	var s int64
	for _, f := range fs {
		s += f.Value()
	}
	return s
}

// child is a process of a test's pool: it joins the pool of its environment, runs its
// scenario and prints the result (and, on the root, the report as JSON).
func child(scenario string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	algo, err := dc.ParseAlgorithm(os.Getenv(envAlgo))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	arg, _ := strconv.Atoi(os.Getenv(envArg))
	ib, err := ipl.New(ctx, dc.IbisOptions()...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "joining:", err)
		return 1
	}
	rt, err := dc.New(ctx, ib, dc.WithAlgorithm(algo), dc.WithStealTimeout(5*time.Second))
	if err != nil {
		fmt.Fprintln(os.Stderr, "dc:", err)
		return 1
	}
	if site := ib.Identifier().Tag; site == "doomed" || site == "joiner" || site == "worker" || site == "victim" {
		// Never the root: wait until the root has been elected.
		if _, err := ib.Registry().ElectionResult(ctx, "dc-root"); err != nil {
			fmt.Fprintln(os.Stderr, "waiting for the root:", err)
			return 1
		}
	}
	if ib.Identifier().Tag == "tardy" {
		// Calls Run only once the run is over: the root's end reaches a process that
		// has not started, which must still answer it, and return the root's result
		// from Run (TestTardyMember).
		if err := ib.Registry().WaitUntilTerminated(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "waiting for the end of the run:", err)
			return 1
		}
	}
	var res int64
	switch scenario {
	case "fib":
		res, err = dc.Run(ctx, rt, fibKind, arg)
	case "kill":
		res, err = dc.Run(ctx, rt, killRoot, arg)
	case "join":
		res, err = dc.Run(ctx, rt, joinRoot, arg)
	case "rootdie":
		res, err = dc.Run(ctx, rt, block, arg)
	case "stall":
		res, err = dc.Run(ctx, rt, stallRoot, arg)
	case "rootstall":
		res, err = dc.Run(ctx, rt, rootStall, arg)
	case "regloss":
		res, err = dc.Run(ctx, rt, regLoss, arg)
	case "foreign":
		res, err = dc.Run(ctx, rt, foreignRoot, arg)
	case "stop":
		sctx := ctx
		if ib.Identifier().Tag != "worker" { // the root: its Run stops after a second
			var cancel context.CancelFunc
			sctx, cancel = context.WithTimeout(ctx, time.Second)
			defer cancel()
		}
		res, err = dc.Run(sctx, rt, stopRoot, arg)
	default:
		err = fmt.Errorf("no scenario %q", scenario)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
		_ = rt.Close()
		_ = ib.Close()
		return 1
	}
	fmt.Printf("result %d\n", res)
	if rt.Root() {
		b, _ := json.Marshal(rt.Report())
		fmt.Printf("report %s\n", b)
	}
	if err := errors.Join(rt.Close(), ib.Close()); err != nil {
		fmt.Fprintln(os.Stderr, "closing:", err)
		return 1
	}
	return 0
}

// proc is a child process and what it printed.
type proc struct {
	c     *selfexec.Child
	mu    sync.Mutex
	lines []string
	seen  chan string // every line, as printed
	done  chan error
}

// pool is a registry for a test's processes.
type pool struct {
	t    *testing.T
	srv  *registry.Server
	addr string
	name string
	impl string
	algo dc.Algorithm
	size int      // closed-world pool size; 0: open (processes may join late)
	env  []string // more environment for every process
}

func newPool(t *testing.T, impl string, algo dc.Algorithm, opts ...registry.ServerOption) *pool {
	srv, err := registry.StartEmbedded("127.0.0.1:0", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return &pool{t: t, srv: srv, addr: srv.Addr(), name: strings.NewReplacer("/", "-", "=", "").Replace(t.Name()), impl: impl, algo: algo}
}

// start starts a process of the pool running scenario with arg, at site.
func (p *pool) start(scenario string, arg int, site string) *proc {
	t := p.t
	c, err := selfexec.Start(context.Background(), []string{selfexec.NoTests}, selfexec.WithoutEnv("IBIS_", "DC_TEST_"),
		selfexec.WithStdoutPipe(), selfexec.WithEnv(envScenario+"="+scenario, envAlgo+"="+p.algo.String(), envArg+"="+strconv.Itoa(arg),
			"IBIS_REGISTRY="+p.addr, "IBIS_POOL="+p.name, "IBIS_IMPL="+p.impl, "IBIS_SITE="+site, "IBIS_POOL_SIZE="+strconv.Itoa(p.size)), selfexec.WithEnv(p.env...))
	if err != nil {
		t.Fatal(err)
	}
	pr := &proc{c: c, seen: make(chan string, 64), done: make(chan error, 1)}
	out := c.StdoutPipe()
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			pr.mu.Lock()
			pr.lines = append(pr.lines, sc.Text())
			pr.mu.Unlock()
			select {
			case pr.seen <- sc.Text():
			default:
			}
		}
		_, _ = io.Copy(io.Discard, out)
		pr.done <- c.Wait()
	}()
	t.Cleanup(func() {
		_ = c.Kill()
		<-pr.done
		c.Close()
	})
	return pr
}

// waitLine waits until the process prints want.
func (pr *proc) waitLine(t *testing.T, want string) {
	t.Helper()
	timer := time.NewTimer(2 * time.Minute)
	defer timer.Stop()
	for {
		select {
		case l := <-pr.seen:
			if l == want {
				return
			}
		case <-timer.C:
			t.Fatalf("no %q from the process; stderr:\n%s", want, pr.errText())
		}
	}
}

// end waits for the process to end and returns how.
func (pr *proc) end(t *testing.T) error {
	t.Helper()
	return pr.endWithin(t, 3*time.Minute)
}

// endWithin is end with a bound of d.
func (pr *proc) endWithin(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case err := <-pr.done:
		pr.done <- err // for the cleanup
		return err
	case <-time.After(d):
		t.Fatalf("process did not end within %v; stderr:\n%s", d, pr.errText())
		return nil
	}
}

// wait waits for the process to end and returns its result and, from the root, report.
func (pr *proc) wait(t *testing.T) (int64, *dc.Report) {
	t.Helper()
	if err := pr.end(t); err != nil {
		t.Fatalf("process failed: %v\n%s", err, pr.errText())
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	res := int64(-1)
	var rep *dc.Report
	for _, l := range pr.lines {
		if v, ok := strings.CutPrefix(l, "result "); ok {
			res, _ = strconv.ParseInt(v, 10, 64)
		}
		if v, ok := strings.CutPrefix(l, "report "); ok {
			rep = &dc.Report{}
			if err := json.Unmarshal([]byte(v), rep); err != nil {
				t.Fatalf("report %q: %v", v, err)
			}
		}
	}
	return res, rep
}

func (pr *proc) errText() string { return pr.c.Stderr() }

// TestPoolOfProcesses runs fib on pools of 1, 2, 3 and 5 processes, in two sites, with
// every algorithm, and requires the right result on every process and a report that
// accounts for every job.
func TestPoolOfProcesses(t *testing.T) {
	const n = 21
	want := fibSeq(n)
	for _, impl := range []string{"tcp", "nio"} {
		for _, algo := range []dc.Algorithm{dc.RS, dc.CRS, dc.TRS} {
			for _, np := range []int{1, 2, 3, 5} {
				if impl == "nio" && np != 3 {
					continue // nio takes the middle size; tcp every one
				}
				t.Run(fmt.Sprintf("%s/%s/P=%d", impl, algo, np), func(t *testing.T) {
					p := newPool(t, impl, algo)
					p.size = np // all of them take part: none joins after a short run ended
					procs := make([]*proc, np)
					for i := range procs {
						procs[i] = p.start("fib", n, fmt.Sprintf("site%d", i%2))
					}
					var rep *dc.Report
					for i, pr := range procs {
						got, r := pr.wait(t)
						if got != want {
							t.Errorf("process %d: fib(%d) = %d, want %d", i, n, got, want)
						}
						if r != nil {
							rep = r
						}
					}
					if rep == nil {
						t.Fatal("no process printed the report")
					}
					if len(rep.Processes) != np || rep.Total.Executed != rep.Total.Spawned {
						t.Errorf("report of %d processes, %d jobs executed of %d spawned", len(rep.Processes), rep.Total.Executed, rep.Total.Spawned)
					}
				})
			}
		}
	}
}

// TestKilledWorker kills a process while it holds a job it stole; the job's owner runs
// it again and the result is still right.
func TestKilledWorker(t *testing.T) {
	for _, algo := range []dc.Algorithm{dc.RS, dc.CRS, dc.TRS} {
		t.Run(algo.String(), func(t *testing.T) {
			p := newPool(t, "tcp", algo)
			root := p.start("kill", 4, "")
			doomed := p.start("kill", 4, "doomed")
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("the doomed process's stderr:\n%s", doomed.errText())
				}
			})
			doomed.waitLine(t, lineHolding)
			root.waitLine(t, lineSaw)
			if err := doomed.c.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			got, rep := root.wait(t)
			if got != 0+1+4+9 {
				t.Errorf("result %d, want 14", got)
			}
			if rep == nil || rep.Total.Requeued < 1 {
				t.Errorf("the report shows no job run again: %+v", rep)
			}
		})
	}
}

// TestLateJoiner starts a process after the run has begun: it steals, and the run cannot
// end unless it does (the other jobs wait for it, and for the worker started with the
// root).
func TestLateJoiner(t *testing.T) {
	for _, algo := range []dc.Algorithm{dc.RS, dc.TRS} {
		t.Run(algo.String(), func(t *testing.T) {
			p := newPool(t, "tcp", algo)
			root := p.start("join", 3, "")
			worker := p.start("join", 3, "worker")
			root.waitLine(t, lineRunning)
			joiner := p.start("join", 3, "joiner")
			want := int64(0 + 1 + 4)
			for name, pr := range map[string]*proc{"root": root, "worker": worker, "joiner": joiner} {
				if got, _ := pr.wait(t); got != want {
					t.Errorf("%s: result %d, want %d", name, got, want)
				}
			}
		})
	}
}

// TestTardyMember: a member of a closed-world pool that calls Run only after the run is
// over (a slow start: the root job was short) gets the root's end before it ran. It must
// still answer with its statistics, at once: the root counted it in the run and would
// otherwise wait its send timeout (60 s) for them and report one process too few. Its
// Run returns the root's result, as on every member: the run ended with it in the pool
// (it failed with ErrRunEnded before, and so did the program of dcapp).
func TestTardyMember(t *testing.T) {
	p := newPool(t, "tcp", dc.RS)
	p.size = 2
	root := p.start("fib", 15, "")
	tardy := p.start("fib", 15, "tardy")
	want := fibSeq(15)
	got, rep := root.wait(t)
	if got != want {
		t.Errorf("root: fib(15) = %d, want %d", got, want)
	}
	if rep == nil || len(rep.Processes) != 2 {
		t.Errorf("the root's report: %+v, want both processes", rep)
	}
	if got, _ := tardy.wait(t); got != want {
		t.Errorf("the tardy member: fib(15) = %d, want %d", got, want)
	}
}

// TestRootDied kills the process running the root job: the others end with ErrRootDied.
func TestRootDied(t *testing.T) {
	p := newPool(t, "tcp", dc.RS)
	root := p.start("rootdie", 0, "")
	worker := p.start("rootdie", 0, "worker")
	root.waitLine(t, lineRunning)
	if err := root.c.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := worker.end(t)
	if err == nil || !strings.Contains(worker.errText(), dc.ErrRootDied.Error()) {
		t.Errorf("the worker ended with %v, stderr %q; want a failure naming %q", err, worker.errText(), dc.ErrRootDied)
	}
}
