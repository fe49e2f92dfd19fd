package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// runSelf runs ibis-run with the test binary as PROGRAM in the given child mode.
func runSelf(t *testing.T, ctx context.Context, flags []string, mode string, extraEnv ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv(envMode, mode)
	for _, kv := range extraEnv {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	var out, errOut bytes.Buffer
	args := append(slices.Clone(flags), "--", os.Args[0])
	code = run(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// linesOf returns the lines of the given process ("[i] " prefix removed), in order.
func linesOf(out string, index int) []string {
	prefix := fmt.Sprintf("[%d] ", index)
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			lines = append(lines, rest)
		}
	}
	return lines
}

func TestEnvironment(t *testing.T) {
	// Stale values in ibis-run's own environment must be replaced, not passed on.
	t.Setenv("IBIS_POOL", "stale-pool")
	t.Setenv("IBIS_RANK", "stale-rank")
	code, out, errOut := runSelf(t, context.Background(),
		[]string{"-np", "3", "-pool", "mypool", "-impl", "tcp", "-heartbeat", "250ms", "-death-timeout", "45s"}, "env")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	var registryAddr string
	for i := range 3 {
		got := linesOf(out, i)
		if len(got) != len(envKeys) {
			t.Fatalf("process %d printed %q", i, got)
		}
		addr, ok := strings.CutPrefix(got[0], "IBIS_REGISTRY=")
		if !ok || !strings.HasPrefix(addr, "127.0.0.1:") {
			t.Fatalf("process %d: %q, want the embedded registry on 127.0.0.1", i, got[0])
		}
		if i == 0 {
			registryAddr = addr
		} else if addr != registryAddr {
			t.Fatalf("process %d got registry %s, process 0 got %s", i, addr, registryAddr)
		}
		want := []string{"IBIS_POOL=mypool", "IBIS_POOL_SIZE=3", "IBIS_IMPL=tcp", "IBIS_RANK=" + strconv.Itoa(i), "IBIS_HEARTBEAT=250ms",
			"IBIS_DEATH_TIMEOUT=45s"}
		if !slices.Equal(got[1:], want) {
			t.Errorf("process %d env %q, want %q", i, got[1:], want)
		}
	}
	if errOut != "" {
		t.Errorf("unexpected stderr without -v: %q", errOut)
	}
}

func TestEnvironmentDefaults(t *testing.T) {
	t.Setenv("IBIS_IMPL", "")
	os.Unsetenv("IBIS_IMPL")
	t.Setenv("IBIS_HEARTBEAT", "")
	os.Unsetenv("IBIS_HEARTBEAT")
	t.Setenv("IBIS_DEATH_TIMEOUT", "")
	os.Unsetenv("IBIS_DEATH_TIMEOUT")
	pools := map[string]bool{}
	for range 2 {
		code, out, errOut := runSelf(t, context.Background(), []string{"-np", "2", "-registry", "127.0.0.1:9"}, "env")
		if code != 0 {
			t.Fatalf("exit %d, stderr:\n%s", code, errOut)
		}
		p0, p1 := linesOf(out, 0), linesOf(out, 1)
		if len(p0) != len(envKeys) || len(p1) != len(envKeys) {
			t.Fatalf("output %q", out)
		}
		if p0[0] != "IBIS_REGISTRY=127.0.0.1:9" {
			t.Errorf("got %q, want the -registry address", p0[0])
		}
		if p0[1] != p1[1] || !strings.HasPrefix(p0[1], "IBIS_POOL=ibis-run-") {
			t.Errorf("pool names %q and %q, want one generated name", p0[1], p1[1])
		}
		pools[p0[1]] = true
		if p0[3] != "IBIS_IMPL unset" || p0[5] != "IBIS_HEARTBEAT unset" || p0[6] != "IBIS_DEATH_TIMEOUT unset" {
			t.Errorf("unset flags leaked into the environment: %q", p0)
		}
	}
	if len(pools) != 2 {
		t.Errorf("two runs shared a pool name: %v", pools)
	}
}

// joinHeartbeat is the -heartbeat of the tests whose processes join the embedded registry:
// other than the default, to show it reaches them, and short, to show that a short interval
// no longer shortens the time a connection has to join or a member has before it is declared
// dead: both are the death timeout (30 s by default). When they were 1.5 intervals, a process
// stalled for half a second on a loaded machine was refused ("poolauth: reading the verdict:
// EOF") or dropped, and these tests failed.
const joinHeartbeat = "300ms"

// TestEmbeddedRegistry: the processes join one closed-world pool at the embedded registry,
// share its sequence numbers, and get the heartbeat interval given with -heartbeat.
func TestEmbeddedRegistry(t *testing.T) {
	code, out, errOut := runSelf(t, context.Background(), []string{"-np", "3", "-heartbeat", joinHeartbeat}, "join")
	if code != 0 {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var seqs []int
	for i := range 3 {
		got := linesOf(out, i)
		var seq int
		if len(got) != 1 {
			t.Fatalf("process %d printed %q", i, got)
		}
		if _, err := fmt.Sscanf(got[0], "pool size 3 heartbeat "+joinHeartbeat+" sequence %d", &seq); err != nil {
			t.Fatalf("process %d printed %q: %v", i, got[0], err)
		}
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	if !slices.Equal(seqs, []int{0, 1, 2}) {
		t.Errorf("sequence numbers %v, want 0, 1 and 2 handed out once each", seqs)
	}
}

func TestOutputPrefixing(t *testing.T) {
	code, out, errOut := runSelf(t, context.Background(), []string{"-np", "2", "-registry", "127.0.0.1:9"}, "lines")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	for i := range 2 {
		want := []string{fmt.Sprintf("out %d a", i), fmt.Sprintf("out %d b", i), fmt.Sprintf("tail %d", i)}
		if got := linesOf(out, i); !slices.Equal(got, want) {
			t.Errorf("process %d stdout %q, want %q", i, got, want)
		}
		if got := linesOf(errOut, i); !slices.Equal(got, []string{fmt.Sprintf("err %d", i)}) {
			t.Errorf("process %d stderr %q", i, got)
		}
	}
	if n := strings.Count(out, "\n"); n != 6 || !strings.HasSuffix(out, "\n") {
		t.Errorf("stdout has %d lines, want 6 whole lines: %q", n, out)
	}
}

// TestVerboseLogsToStderrOnly: -v logs go to stderr; stdout carries only the processes' lines.
func TestVerboseLogsToStderrOnly(t *testing.T) {
	code, out, errOut := runSelf(t, context.Background(), []string{"-np", "2", "-v"}, "lines")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasPrefix(l, "[0] ") && !strings.HasPrefix(l, "[1] ") {
			t.Errorf("stdout line %q is not a process's line", l)
		}
	}
	for _, want := range []string{"starting pool", "registry-server", "all processes succeeded"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// readyWatcher is the stdout of a run whose sleeping processes print "ready PID": it collects
// the pids and closes ready when all expected sleepers have reported, so the test knows, without
// sleeping, that they run.
type readyWatcher struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	want   int
	pids   []int
	ready  chan struct{}
	closed bool
}

func newReadyWatcher(want int) *readyWatcher {
	return &readyWatcher{want: want, ready: make(chan struct{})}
}

func (w *readyWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for _, l := range strings.Split(string(p), "\n") {
		if _, rest, ok := strings.Cut(l, "] ready "); ok {
			pid, err := strconv.Atoi(rest)
			if err == nil {
				w.pids = append(w.pids, pid)
			}
		}
	}
	if len(w.pids) >= w.want && !w.closed {
		w.closed = true
		close(w.ready)
	}
	return len(p), nil
}

// goAhead serves the failing process: it answers its connection once ready is closed.
func goAhead(t *testing.T, ready <-chan struct{}) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		<-ready
		conn.Write([]byte("go\n"))
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return ln.Addr().String()
}

// assertGone checks that the processes no longer exist (they were reaped by ibis-run).
func assertGone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists (kill 0: %v)", pid, err)
		}
	}
}

// TestFailureStopsPool: process 2 exits with status 3 while the others sleep; ibis-run stops
// the sleepers and exits with 3.
func TestFailureStopsPool(t *testing.T) {
	w := newReadyWatcher(3)
	addr := goAhead(t, w.ready)
	t.Setenv(envMode, "fail-or-sleep")
	t.Setenv(envFailer, "2")
	t.Setenv(envCode, "3")
	t.Setenv(envAddr, addr)
	var errOut bytes.Buffer
	code := run(context.Background(), []string{"-np", "4", "--", os.Args[0]}, w, &errOut)
	if code != 3 {
		t.Fatalf("exit %d, want 3; stderr:\n%s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "process 2 exited with status 3") {
		t.Errorf("stderr does not name the failure:\n%s", errOut.String())
	}
	if len(w.pids) != 3 {
		t.Fatalf("sleepers reported %v", w.pids)
	}
	assertGone(t, w.pids)
}

func TestSignalDeathExitCode(t *testing.T) {
	code, _, errOut := runSelf(t, context.Background(), []string{"-np", "1", "-registry", "127.0.0.1:9"}, "selfkill")
	if code != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, 128+int(syscall.SIGKILL), errOut)
	}
	if !strings.Contains(errOut, "killed by signal 9") {
		t.Errorf("stderr does not say how the process died:\n%s", errOut)
	}
}

func TestExitCodePassedOn(t *testing.T) {
	code, _, errOut := runSelf(t, context.Background(), []string{"-np", "2", "-registry", "127.0.0.1:9"}, "exit", envCode+"=42")
	if code != 42 {
		t.Fatalf("exit %d, want 42; stderr:\n%s", code, errOut)
	}
}

// TestTimeout: processes that would sleep for an hour are stopped by -timeout; exit 124.
func TestTimeout(t *testing.T) {
	w := newReadyWatcher(0)
	t.Setenv(envMode, "fail-or-sleep")
	t.Setenv(envFailer, "none")
	var errOut bytes.Buffer
	code := run(context.Background(), []string{"-np", "2", "-timeout", "50ms", "--", os.Args[0]}, w, &errOut)
	if code != exitTimeout {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitTimeout, errOut.String())
	}
	if !strings.Contains(errOut.String(), "timeout after 50ms") {
		t.Errorf("stderr lacks the timeout message:\n%s", errOut.String())
	}
	assertGone(t, w.pids)
}

// TestInterrupt: a signal to ibis-run (its context's cause) stops the processes; exit 130.
func TestInterrupt(t *testing.T) {
	w := newReadyWatcher(2)
	t.Setenv(envMode, "fail-or-sleep")
	t.Setenv(envFailer, "none")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		<-w.ready
		cancel(&signalError{sig: syscall.SIGINT})
	}()
	var errOut bytes.Buffer
	code := run(ctx, []string{"-np", "2", "--", os.Args[0]}, w, &errOut)
	if code != 130 {
		t.Fatalf("exit %d, want 130; stderr:\n%s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "received interrupt") {
		t.Errorf("stderr lacks the interrupt message:\n%s", errOut.String())
	}
	assertGone(t, w.pids)
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "no PROGRAM"},
		{[]string{"prog"}, "-np 0"},
		{[]string{"-np", "0", "prog"}, "-np 0"},
		{[]string{"-np", "-2", "prog"}, "-np -2"},
		{[]string{"-np", "100000", "prog"}, "at most 4096"},
		{[]string{"-np", "x", "prog"}, "invalid value"},
		{[]string{"-np", "1"}, "no PROGRAM"},
		{[]string{"-np", "1", "--"}, "no PROGRAM"},
		{[]string{"-np", "1", "-bogus", "prog"}, "-bogus"},
		{[]string{"-np", "1", "-heartbeat", "-1s", "prog"}, "-heartbeat"},
		{[]string{"-np", "1", "-death-timeout", "-1s", "prog"}, "-death-timeout"},
		{[]string{"-np", "1", "-timeout", "-1s", "prog"}, "-timeout"},
		{[]string{"-np", "1", "-grace", "-1s", "prog"}, "-grace"},
		{[]string{"-np", "1", "-timeout", "soon", "prog"}, "invalid value"},
		{[]string{"-np", "1", "-registry", "nohostport", "prog"}, "-registry"},
		{[]string{"-np", "1", "-registry", ":8888", "prog"}, "missing host"},
		{[]string{"-np", "1", "-registry", "h:99999", "prog"}, "port"},
		{[]string{"-np", "1", "-registry", "h:1,,h:2", "prog"}, "item 2 is empty"},
		{[]string{"-np", "1", "-registry", "h:1, h:1", "prog"}, "twice"},
		{[]string{"-np", "1", "-registry", "h:1,:2", "prog"}, ":2: want host:port: missing host"},
		{[]string{"-np", "1", "-pool", " padded", "prog"}, "-pool"},
		{[]string{"-np", "1", "-impl", "a\x00b", "prog"}, "NUL"},
		{[]string{"-np", "2", "-impl", "mp", "prog"}, "started by mpirun or srun"},
		{[]string{"-np", "2", "-registry", "h:1", "-metrics", "127.0.0.1:0", "prog"}, "-metrics with -registry"},
		{[]string{"-np", "2", "-registry", "h:1", "-heartbeat", "500ms", "prog"}, "-heartbeat with -registry: it configures the registry that ibis-run starts"},
		{[]string{"-np", "2", "-death-timeout", "3s", "-registry", "h:1", "prog"}, "-death-timeout with -registry: it configures the registry that ibis-run starts"},
		{[]string{"-np", "2", "-registry", "h:1", "-heartbeat", "0", "prog"}, "-heartbeat with -registry"},
		{[]string{"-np", "1", "-pool", strings.Repeat("p", 70000), "prog"}, "at most"},
		{[]string{"-np", "1", ""}, "empty PROGRAM"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), tt.args, &out, &errOut)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(errOut.String(), tt.want) || !strings.Contains(errOut.String(), "ibis-run -h") {
				t.Errorf("stderr %q, want it to mention %q and -h", errOut.String(), tt.want)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out.String())
			}
		})
	}
}

// TestRegistryListAccepted: -registry takes a list of front ends, and passes it to the
// processes as given.
func TestRegistryListAccepted(t *testing.T) {
	s, err := parseArgs([]string{"-np", "1", "-registry", "h:1, g:2", "prog"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.registry != "h:1, g:2" {
		t.Fatalf("registry %q, want the list as given", s.registry)
	}
}

func TestHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	for _, want := range []string{"usage: ibis-run -np N", "-registry", "-timeout", "-grace"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, errOut.String())
		}
	}
}

func TestProgramNotFound(t *testing.T) {
	for _, prog := range []string{"ibis-run-no-such-program", "./no/such/program"} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"-np", "2", prog}, &out, &errOut)
		if code != exitNotFound || !strings.Contains(errOut.String(), prog) {
			t.Errorf("%s: exit %d, stderr %q; want %d naming the program", prog, code, errOut.String(), exitNotFound)
		}
	}
	dir := t.TempDir()
	notExec := dir + "/script"
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"-np", "1", notExec}, &out, &errOut); code != exitNotExec {
		t.Errorf("not executable: exit %d, want %d; stderr %q", code, exitNotExec, errOut.String())
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&signalError{sig: syscall.SIGTERM})
	var out, errOut bytes.Buffer
	if code := run(ctx, []string{"-np", "1", os.Args[0]}, &out, &errOut); code != 143 {
		t.Fatalf("exit %d, want 143; stderr %q", code, errOut.String())
	}
}
