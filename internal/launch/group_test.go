package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

// childEnv returns an environment function that runs the test binary in the given child mode
// with the extra variables.
func childEnv(mode string, extra ...string) Option {
	return WithEnv(func(i int) []string {
		env := append(childBaseEnv(), envMode+"="+mode, fmt.Sprintf("%s=%d", envIndex, i))
		return append(env, extra...)
	})
}

func self() Spec { return Spec{Program: os.Args[0]} }

func spec(n int) Spec {
	s := self()
	s.N = n
	return s
}

func sortedLines(s string) []string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	slices.Sort(lines)
	return lines
}

func TestRunPrefixesLines(t *testing.T) {
	var stdout, stderr bytes.Buffer
	statuses, err := Run(context.Background(), spec(3), childEnv("lines"),
		WithStdout(&stdout), WithStderr(&stderr), WithLogger(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var wantOut, wantErr []string
	for i := range 3 {
		for k := range 3 {
			wantOut = append(wantOut, fmt.Sprintf("[%d] out %d %d", i, i, k))
			wantErr = append(wantErr, fmt.Sprintf("[%d] err %d %d", i, i, k))
		}
	}
	if got := sortedLines(stdout.String()); !slices.Equal(got, wantOut) {
		t.Errorf("stdout lines %q, want %q", got, wantOut)
	}
	if got := sortedLines(stderr.String()); !slices.Equal(got, wantErr) {
		t.Errorf("stderr lines %q, want %q", got, wantErr)
	}
	// Each process's own lines keep their order.
	for i := range 3 {
		var mine []string
		for _, l := range strings.Split(stdout.String(), "\n") {
			if strings.HasPrefix(l, fmt.Sprintf("[%d] ", i)) {
				mine = append(mine, l)
			}
		}
		if !slices.IsSorted(mine) || len(mine) != 3 {
			t.Errorf("process %d lines out of order or missing: %q", i, mine)
		}
	}
	for i, st := range statuses {
		if st.Index != i || !st.Started || st.Pid == 0 || st.ExitCode != 0 || st.Signal != nil ||
			st.Err != nil || st.Failed() || st.Code() != 0 {
			t.Errorf("status %d = %+v, want a clean exit", i, st)
		}
	}
}

// TestSharedDestination sends stdout and stderr to one writer, as a terminal does: lines stay
// whole because both go through one lock.
func TestSharedDestination(t *testing.T) {
	var buf bytes.Buffer
	both := NewLockedWriter(&buf)
	if _, err := Run(context.Background(), spec(4), childEnv("lines"), WithStdout(both), WithStderr(both)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	lines := sortedLines(buf.String())
	if len(lines) != 24 {
		t.Fatalf("got %d lines, want 24: %q", len(lines), lines)
	}
	for _, l := range lines {
		var i, j, k int
		var kind string
		if n, err := fmt.Sscanf(l, "[%d] %s %d %d", &i, &kind, &j, &k); n != 4 || err != nil || i != j {
			t.Errorf("mangled line %q", l)
		}
	}
}

func TestPartialLastLine(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if _, err := Run(context.Background(), spec(1), childEnv("partial"), WithStdout(&stdout), WithStderr(&stderr)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got, want := stdout.String(), "[0] first\n[0] second\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if got, want := stderr.String(), "[0] e-partial\n"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
}

// TestFailureStopsOthers: process 1 exits with status 3 once the others are running; the
// others are stopped with SIGTERM and the group reports process 1's failure.
func TestFailureStopsOthers(t *testing.T) {
	c := newCoordinator(t, 3)
	var (
		mu       sync.Mutex
		reported []int
	)
	statuses, err := Run(context.Background(), spec(4),
		childEnv("coord", envAddr+"="+c.addr(), envFailer+"=1", envCode+"=3"),
		WithLogger(zaptest.NewLogger(t)),
		WithOnFailure(func(ce *ChildError) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, ce.Status.Index)
		}))
	mu.Lock()
	if !slices.Equal(reported, []int{1}) {
		t.Errorf("failure hook called for %v, want once for process 1", reported)
	}
	mu.Unlock()
	var ce *ChildError
	if !errors.As(err, &ce) || !errors.Is(err, ErrChildFailed) {
		t.Fatalf("Run error %v, want a *ChildError", err)
	}
	if ce.Status.Index != 1 || ce.Status.ExitCode != 3 || ce.Status.Code() != 3 {
		t.Fatalf("first failure %+v, want process 1 with status 3", ce.Status)
	}
	if !strings.Contains(err.Error(), "process 1 exited with status 3") {
		t.Errorf("error message %q does not say what failed", err)
	}
	for _, i := range []int{0, 2, 3} {
		if st := statuses[i]; st.Signal != syscall.SIGTERM || st.Code() != 128+int(syscall.SIGTERM) {
			t.Errorf("sleeper %d status %+v, want killed by SIGTERM", i, st)
		}
	}
	c.waitGone()
}

// TestGraceThenKill: sleepers that ignore SIGTERM are killed with SIGKILL after the grace
// period.
func TestGraceThenKill(t *testing.T) {
	c := newCoordinator(t, 2)
	statuses, err := Run(context.Background(), spec(3),
		childEnv("coord", envAddr+"="+c.addr(), envFailer+"=0", envCode+"=5", envIgnoreTerm+"=1"),
		WithGrace(time.Millisecond))
	var ce *ChildError
	if !errors.As(err, &ce) || ce.Status.Index != 0 || ce.Status.Code() != 5 {
		t.Fatalf("Run error %v, want process 0 failing with 5", err)
	}
	for _, i := range []int{1, 2} {
		if st := statuses[i]; st.Signal != syscall.SIGKILL || st.Code() != 137 {
			t.Errorf("sleeper %d status %+v, want killed by SIGKILL", i, st)
		}
	}
	c.waitGone()
}

func TestKilledBySignalIsFailure(t *testing.T) {
	_, err := Run(context.Background(), spec(1), childEnv("selfkill"))
	var ce *ChildError
	if !errors.As(err, &ce) {
		t.Fatalf("Run error %v, want a *ChildError", err)
	}
	if ce.Status.Signal != syscall.SIGKILL || ce.Status.ExitCode != -1 || ce.Status.Code() != 137 {
		t.Fatalf("status %+v, want killed by SIGKILL (code 137)", ce.Status)
	}
	if !strings.Contains(ce.Error(), "killed by signal 9") {
		t.Errorf("message %q does not name the signal", ce.Error())
	}
}

func TestExitCodes(t *testing.T) {
	for _, code := range []int{1, 2, 42, 255} {
		_, err := Run(context.Background(), spec(1), childEnv("exit", fmt.Sprintf("%s=%d", envCode, code)))
		var ce *ChildError
		if !errors.As(err, &ce) || ce.Status.Code() != code {
			t.Errorf("exit %d: got %v", code, err)
		}
	}
	if _, err := Run(context.Background(), spec(2), childEnv("exit", envCode+"=0")); err != nil {
		t.Errorf("exit 0: got %v", err)
	}
}

// TestStopFromContext: cancelling Run's context stops a running group and reports the cause.
func TestStopFromContext(t *testing.T) {
	c := newCoordinator(t, 2)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	cause := errors.New("operator pressed ^C")
	go func() {
		<-c.ready
		cancel(cause)
	}()
	statuses, err := Run(ctx, spec(2), childEnv("coord", envAddr+"="+c.addr(), envFailer+"=none"))
	if !errors.Is(err, ErrStopped) || !errors.Is(err, cause) {
		t.Fatalf("Run error %v, want ErrStopped with the cause", err)
	}
	for i, st := range statuses {
		if st.Signal != syscall.SIGTERM {
			t.Errorf("process %d status %+v, want killed by SIGTERM", i, st)
		}
	}
	c.waitGone()
}

func TestRunWithDoneContextStartsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, spec(1), childEnv("hello")); !errors.Is(err, ErrStopped) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error %v, want ErrStopped and context.Canceled", err)
	}
}

// TestKillReachesGrandchildren: stopping a process also stops what it started, because each
// process leads its own process group.
func TestKillReachesGrandchildren(t *testing.T) {
	c := newCoordinator(t, 1)
	g, err := Start(spec(1), childEnv("parent", envAddr+"="+c.addr(), envFailer+"=none"))
	if err != nil {
		t.Fatal(err)
	}
	<-c.ready
	g.Kill()
	statuses, err := g.Wait()
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("Wait error %v, want ErrStopped", err)
	}
	if statuses[0].Signal != syscall.SIGKILL {
		t.Errorf("status %+v, want killed by SIGKILL", statuses[0])
	}
	c.waitGone()
}

func TestWaitTwiceAndStopAfterEnd(t *testing.T) {
	g, err := Start(spec(2), childEnv("hello"))
	if err != nil {
		t.Fatal(err)
	}
	s1, err1 := g.Wait()
	g.Stop() // after the end: no effect, no error
	g.Kill()
	s2, err2 := g.Wait()
	if err1 != nil || err2 != nil || !slices.EqualFunc(s1, s2, func(a, b Status) bool { return a.Pid == b.Pid }) {
		t.Fatalf("Wait twice: %v %v %v %v", s1, err1, s2, err2)
	}
}

func TestStartErrors(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		opts []Option
		want error
	}{
		{"zero processes", Spec{Program: os.Args[0]}, nil, ErrInvalid},
		{"negative processes", Spec{Program: os.Args[0], N: -1}, nil, ErrInvalid},
		{"no program", Spec{N: 1}, nil, ErrInvalid},
		{"nil option", spec(1), []Option{nil}, ErrInvalid},
		{"nil stdout", spec(1), []Option{WithStdout(nil)}, ErrInvalid},
		{"nil stderr", spec(1), []Option{WithStderr(nil)}, ErrInvalid},
		{"nil env", spec(1), []Option{WithEnv(nil)}, ErrInvalid},
		{"nil logger", spec(1), []Option{WithLogger((*zap.Logger)(nil))}, ErrInvalid},
		{"negative grace", spec(1), []Option{WithGrace(-time.Second)}, ErrInvalid},
		{"zero max line", spec(1), []Option{WithMaxLine(0)}, ErrInvalid},
		{"nil failure hook", spec(1), []Option{WithOnFailure(nil)}, ErrInvalid},
		{"nil exit hook", spec(1), []Option{WithOnExit(nil)}, ErrInvalid},
		{"not on PATH", Spec{Program: "ibis-run-no-such-program", N: 1}, nil, exec.ErrNotFound},
		{"no such file", Spec{Program: "./no/such/program", N: 1}, nil, ErrStart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Start(tt.spec, tt.opts...)
			if !errors.Is(err, tt.want) || g != nil {
				t.Fatalf("Start = %v, %v; want error matching %v", g, err, tt.want)
			}
		})
	}
}

// TestStartFailureMidway: when process 2 cannot be started (its environment is invalid), the
// two already running are killed and reaped before Start returns.
func TestStartFailureMidway(t *testing.T) {
	c := newCoordinator(t, 2)
	env := WithEnv(func(i int) []string {
		if i == 2 {
			return []string{"BAD\x00VARIABLE=1"}
		}
		return append(childBaseEnv(), envMode+"=coord", fmt.Sprintf("%s=%d", envIndex, i),
			envAddr+"="+c.addr(), envFailer+"=none")
	})
	g, err := Start(spec(3), env)
	if !errors.Is(err, ErrStart) || g != nil || !strings.Contains(err.Error(), "process 2") {
		t.Fatalf("Start = %v, %v; want ErrStart naming process 2", g, err)
	}
}

// TestLostOutputIsFailure: when the group's output cannot be written, the process that wrote
// it counts as failed (its output was lost) rather than silently succeeding.
func TestLostOutputIsFailure(t *testing.T) {
	statuses, err := Run(context.Background(), spec(1), childEnv("lines"), WithStdout(&brokenWriter{}))
	var ce *ChildError
	if !errors.As(err, &ce) {
		t.Fatalf("Run error %v, want a *ChildError", err)
	}
	// Either the child saw the closed pipe (SIGPIPE) or it had finished and its output error
	// is reported; both are failures.
	st := statuses[0]
	if !errors.Is(err, errBroken) && st.Signal != syscall.SIGPIPE {
		t.Fatalf("status %+v, want lost output or SIGPIPE", st)
	}
	if !st.Failed() || st.Code() == 0 {
		t.Fatalf("status %+v does not count as failed", st)
	}
}

// TestOnExitSeesEveryProcess: the exit function hears of every process, the successful ones
// too, with the status Wait reports.
func TestOnExitSeesEveryProcess(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]int{}
	onExit := WithOnExit(func(st Status) {
		mu.Lock()
		defer mu.Unlock()
		seen[st.Index] = st.Code()
	})
	statuses, err := Run(context.Background(), spec(3), childEnv("exit", envCode+"=3"), onExit)
	if !errors.Is(err, ErrChildFailed) {
		t.Fatalf("Run: %v, want a failure", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, st := range statuses {
		if code, ok := seen[st.Index]; st.Started && (!ok || code != st.Code()) {
			t.Errorf("process %d: exit function saw %d (%v), Wait %d", st.Index, code, ok, st.Code())
		}
	}
	if len(seen) == 0 {
		t.Fatal("exit function never called")
	}
}
