package applaunch

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// envTestLauncher makes the test binary an application with -np: it runs Local, whose
// processes (this binary again, with IBIS_RANK set) print "ready PID" and wait for a signal.
const envTestLauncher = "APPLAUNCH_TEST_LAUNCHER"

func TestMain(m *testing.M) {
	if os.Getenv(envTestLauncher) != "" {
		os.Exit(launcherChild())
	}
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}

// launcherChild is an application as sor's main is: signals end its context; with IBIS_RANK
// set it is one of the pool's processes, otherwise the -np launcher of two.
func launcherChild() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, ok := os.LookupEnv(envRank); ok && os.Getenv(envTestLose) != "" {
		return loseRank(ctx)
	}
	if _, ok := os.LookupEnv(envRank); ok {
		fmt.Printf("ready %d\n", os.Getpid())
		select {
		case <-ctx.Done():
			fmt.Fprintln(os.Stderr, "rank interrupted")
			return 1 // as an application whose work was cut short
		case <-time.After(5 * time.Minute):
			return 3
		}
	}
	if d, err := time.ParseDuration(os.Getenv(envTestTimeout)); err == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d) // as the applications' -timeout
		defer cancel()
	}
	if os.Getenv(envTestLose) != "" {
		return Local(ctx, "apptest", 2, nil, os.Stdout, os.Stderr, false, WithLossTolerated())
	}
	return Local(ctx, "apptest", 2, nil, os.Stdout, os.Stderr, false)
}

// envTestLose makes the test launcher tolerate lost processes, and each of its
// processes join the pool, wait until it is whole, and fail (loseRank).
const envTestLose = "APPLAUNCH_TEST_LOSE"

// loseRank joins the launcher's pool, waits until every process has joined (so that
// the launcher tolerates the loss), and fails.
func loseRank(ctx context.Context) int {
	n, _ := strconv.Atoi(os.Getenv(ipl.EnvPoolSize))
	c, err := registry.Join(ctx, os.Getenv(ipl.EnvRegistry), os.Getenv(ipl.EnvPool), registry.WithPoolSize(n))
	if err != nil {
		fmt.Fprintln(os.Stderr, "join:", err)
		return 2
	}
	defer func() { _ = c.Close() }()
	if err := c.WaitUntilPoolClosed(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "wait:", err)
		return 2
	}
	return 1
}

// envTestTimeout gives the test launcher a deadline, as an application's -timeout does.
const envTestTimeout = "APPLAUNCH_TEST_TIMEOUT"

// TestInterruptExitCode: Ctrl-C (SIGINT to the launcher and to its processes, as a terminal
// sends it to the whole foreground group) makes an -np launcher exit 130, not with the status
// of a process it stopped; SIGTERM to the launcher alone makes it exit 143.
func TestInterruptExitCode(t *testing.T) {
	for _, c := range []struct {
		name    string
		sig     syscall.Signal
		toRanks bool
		want    int
	}{
		{"ctrl-c", syscall.SIGINT, true, 130},
		{"sigterm", syscall.SIGTERM, false, 143},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			child, err := selfexec.Start(ctx, nil, selfexec.WithoutEnv("IBIS_"),
				selfexec.WithEnv(envTestLauncher+"=1"), selfexec.WithStdoutPipe())
			if err != nil {
				t.Fatal(err)
			}
			defer child.Close()
			pids := readyPids(t, child.StdoutPipe(), 2)
			if c.toRanks {
				for _, pid := range pids {
					if err := syscall.Kill(pid, c.sig); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := child.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			_ = child.Wait()
			if code := child.ExitCode(); code != c.want {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, c.want, child.Stderr())
			}
			if want := fmt.Sprintf("apptest: received %v", c.sig); !strings.Contains(child.Stderr(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, child.Stderr())
			}
		})
	}
}

// readyPids reads "ready PID" lines until n processes said they run, and leaves the rest of
// the output to a goroutine that ends when the pipe does.
func readyPids(t *testing.T, r io.Reader, n int) []int {
	t.Helper()
	sc := bufio.NewScanner(r)
	var pids []int
	for len(pids) < n && sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "ready" {
			pid, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("bad line %q", sc.Text())
			}
			pids = append(pids, pid)
		}
	}
	if len(pids) < n {
		t.Fatalf("%d processes ready before the output ended: %v", len(pids), sc.Err())
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	return pids
}

// startTestLauncher starts the test binary as an -np launcher of two processes, with env
// added to its environment.
func startTestLauncher(t *testing.T, ctx context.Context, env []string, opts ...selfexec.Option) *selfexec.Child {
	t.Helper()
	opts = append([]selfexec.Option{selfexec.WithoutEnv("IBIS_", envTestTimeout+"="),
		selfexec.WithEnv(append([]string{envTestLauncher + "=1"}, env...)...)}, opts...)
	child, err := selfexec.Start(ctx, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(child.Close)
	return child
}

// TestTimeoutExitCode: when the launcher's deadline (-timeout) passes, it stops the
// processes, says why and exits 124, as ibis-run and timeout(1) do; it used to exit with a
// stopped process's status, silently or blaming a signal nobody sent. (The deadline may
// pass before, while or after the processes start: each way ends so.)
func TestTimeoutExitCode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// The processes wait five minutes for a signal: the launcher's 300 ms end first.
	child := startTestLauncher(t, ctx, []string{envTestTimeout + "=300ms"})
	_ = child.Wait()
	if code := child.ExitCode(); code != exitTimeout {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitTimeout, child.Stderr())
	}
	if want := "apptest: the time limit (-timeout) ran out; the processes were stopped"; !strings.Contains(child.Stderr(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, child.Stderr())
	}
}

// TestLastLossSaysNoOthersGoOn: with losses tolerated (the divide-and-conquer
// applications), every process of a whole pool fails; the launcher said "the others go
// on without it" of each, also of the last, when there were none left.
func TestLastLossSaysNoOthersGoOn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	child := startTestLauncher(t, ctx, []string{envTestLose + "=1"})
	_ = child.Wait()
	lines := strings.Split(strings.TrimSpace(child.Stderr()), "\n")
	if child.ExitCode() != 1 || len(lines) != 2 || !strings.HasSuffix(lines[0], "the others go on without it") ||
		strings.Contains(lines[1], "the others go on") || !strings.Contains(lines[1], "failed") {
		t.Errorf("exit %d; stderr:\n%s\nwant exit 1, the first loss with the others going on, the last without", child.ExitCode(), child.Stderr())
	}
}

// TestKilledLauncherTakesItsProcesses: SIGKILL to an -np launcher, which can stop nothing,
// still ends its processes (the kernel's parent-death signal); they used to run on alone.
func TestKilledLauncherTakesItsProcesses(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	child := startTestLauncher(t, ctx, nil, selfexec.WithStdoutPipe())
	pids := readyPids(t, child.StdoutPipe(), 2)
	defer func() {
		for _, pid := range pids { // on failure, leave nothing running
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	if err := child.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	for _, pid := range pids {
		for alive(pid) {
			select {
			case <-ctx.Done():
				t.Fatalf("process %d still runs after its launcher was killed", pid)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

// alive reports whether process pid exists and is not a zombie (an orphan that nobody has
// reaped yet has ended all the same).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
