package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/selfexec"
)

// startIbisRun starts the test binary as ibis-run (envMain) with args and the processes in
// the given child mode ("" for a PROGRAM other than this binary), its stdout the write end of
// a pipe whose read end it returns.
func startIbisRun(t *testing.T, mode string, args ...string) (*selfexec.Child, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c, err := selfexec.Start(t.Context(), args, selfexec.WithEnv(envMain+"=1", envMode+"="+mode), selfexec.WithStdout(w))
	w.Close() // ibis-run has its copy
	if err != nil {
		r.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		r.Close()
	})
	return c, r
}

// chatterer is one process of the "chatter" mode as it reported itself.
type chatterer struct {
	pid, grandchild int
	dir             string
}

// TestBrokenOutputPipe is `ibis-run -secret -tls -np 2 -- PROGRAM | head`, with ibis-run a
// real process: when the reader of its stdout goes away while the processes still write,
// ibis-run stops them and what they started (their process groups), removes its private
// directory, says why on stderr and exits 141, instead of dying of SIGPIPE and leaving the
// directory and the processes' children behind.
func TestBrokenOutputPipe(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, r := startIbisRun(t, "chatter", "-np", "2", "-secret", "-tls", "--", exe)
	procs := map[string]chatterer{}
	sc := bufio.NewScanner(r)
	for len(procs) < 2 && sc.Scan() {
		prefix, rest, _ := strings.Cut(sc.Text(), " ")
		var p chatterer
		if _, err := fmt.Sscanf(rest, "ready %d %d %s", &p.pid, &p.grandchild, &p.dir); err == nil {
			procs[prefix] = p
		}
	}
	if len(procs) < 2 {
		t.Fatalf("ibis-run's stdout ended before both processes were ready (%v); stderr:\n%s", sc.Err(), c.Stderr())
	}
	r.Close() // as head does once it has its lines

	_ = c.Wait() // the exit status is checked below
	if code := c.ExitCode(); code != exitOutputGone {
		t.Errorf("ibis-run ended with %v, want exit status %d; stderr:\n%s", c.ProcessState(), exitOutputGone, c.Stderr())
	}
	for _, want := range []string{"cannot write to standard output", "broken pipe", "stopping the processes"} {
		if !strings.Contains(c.Stderr(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, c.Stderr())
		}
	}
	deadline := time.Now().Add(deadBound)
	for prefix, p := range procs {
		if _, err := os.Stat(p.dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: the private directory %s is still there after the run: %v", prefix, p.dir, err)
		}
		// ibis-run reaped the process itself; the grandchild got SIGTERM with its group and
		// dies in its own time.
		assertGone(t, []int{p.pid})
		if !awaitDead(p.grandchild, deadline) {
			t.Errorf("%s: the process's child %d still runs after ibis-run ended", prefix, p.grandchild)
			syscall.Kill(p.grandchild, syscall.SIGKILL)
		}
	}
}

// deadBound bounds how long processes that were sent SIGTERM may take to die: a bound for a
// loaded machine, not a speed.
const deadBound = time.Minute

// awaitDead waits until process pid has ended (gone, or a zombie whose new parent has not
// reaped it yet) and reports whether it did before deadline.
func awaitDead(pid int, deadline time.Time) bool {
	for ; time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if errors.Is(err, fs.ErrNotExist) {
			return true
		}
		// The state follows the parenthesised command name: "PID (COMM) S ...".
		if i := strings.LastIndexByte(string(stat), ')'); err == nil && i >= 0 && strings.HasPrefix(string(stat[i:]), ") Z") {
			return true
		}
	}
	return false
}

// TestProcessesKeepDefaultSIGPIPE: ibis-run catches SIGPIPE rather than ignoring it, so that
// its processes do not inherit an ignored SIGPIPE (a program such as `yes` would then never
// end when its reader went away). grep shows the signals ignored in the process it runs in.
func TestProcessesKeepDefaultSIGPIPE(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	c, r := startIbisRun(t, "", "-np", "1", "--", "grep", "^SigIgn:", "/proc/self/status")
	sc := bufio.NewScanner(r)
	var line string
	for sc.Scan() {
		line = sc.Text()
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("ibis-run: %v; stderr:\n%s", err, c.Stderr())
	}
	hex, ok := strings.CutPrefix(line, "[0] SigIgn:")
	mask, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
	if !ok || err != nil {
		t.Fatalf("the process printed %q, want its SigIgn line (%v)", line, err)
	}
	if mask&(1<<(int(syscall.SIGPIPE)-1)) != 0 {
		t.Errorf("the process was started with SIGPIPE ignored (SigIgn %s)", strings.TrimSpace(hex))
	}
}
