package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/internal/leakcheck"
)

// TestMain lets the test binary play the peer processes the suite starts: a process
// started with the peer arguments in its environment runs them instead of tests.
func TestMain(m *testing.M) {
	if args, ok := peerArgs(); ok {
		os.Exit(run(context.Background(), args, os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}

// testTimeout bounds one end-to-end run; it only ends a hung run.
const testTimeout = 2 * time.Minute

// runCmd runs ibis-bench with args and returns its exit status, stdout and stderr.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var out, errb bytes.Buffer
	code := run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// mustRun runs ibis-bench and fails the test unless it succeeds; it returns stdout
// and the parsed JSON report.
func mustRun(t *testing.T, args ...string) (string, map[string]any) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.json")
	code, out, errs := runCmd(t, append(args, "-q", "-json", path)...)
	if code != 0 {
		t.Fatalf("ibis-bench %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errs)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("JSON output: %v\n%s", err, b)
	}
	if rep["command"] != args[0] {
		t.Fatalf("JSON command %v, want %s", rep["command"], args[0])
	}
	return out, rep
}

func TestUsage(t *testing.T) {
	code, out, _ := runCmd(t, "-h")
	if code != 0 {
		t.Fatalf("-h: exit %d", code)
	}
	for _, name := range []string{"pingpong", "throughput", "arrays2d", "masterworker", "connect", "manytoone", "latency"} {
		if !strings.Contains(out, name) {
			t.Errorf("usage does not list %s:\n%s", name, out)
		}
	}
	if code, _, errs := runCmd(t); code != 2 || !strings.Contains(errs, "Subcommands") {
		t.Fatalf("no arguments: exit %d, %q", code, errs)
	}
	if code, _, errs := runCmd(t, "nosuch"); code != 2 || !strings.Contains(errs, `unknown subcommand "nosuch"`) {
		t.Fatalf("unknown subcommand: exit %d, %q", code, errs)
	}
	code, _, errs := runCmd(t, "pingpong", "-h")
	if code != 0 || !strings.Contains(errs, "-impl nio only") || !strings.Contains(errs, "-max-size") ||
		!strings.Contains(errs, "registered: tcp, nio") {
		t.Fatalf("pingpong -h: exit %d\n%s", code, errs)
	}
}

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"pingpong", "-impl", "nosuch"}, 1, `ipl: no implementation: "nosuch" is not linked in (have tcp, nio)`},
		{[]string{"pingpong", "-impl", "nio", "-nio-receive", "select"}, 2, `-nio-receive "select": want one of blocking, nonblocking, thread`},
		{[]string{"pingpong", "-nio-send", "fast"}, 2, `-nio-send "fast"`},
		{[]string{"pingpong", "-plot", "x.gif"}, 2, "must end in .png or .svg"},
		{[]string{"pingpong", "-types", "strings"}, 2, `unknown payload kind "strings"`},
		{[]string{"pingpong", "-sizes", "12,x"}, 2, `"x" is not a non-negative integer`},
		{[]string{"arrays2d", "-types", "int8"}, 2, `unknown element type "int8"`},
		{[]string{"masterworker", "-workers", "0"}, 2, "at least 1"},
		{[]string{"connect", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"throughput", "-size", "12"}, 2, "multiple of 8"},
		{[]string{"manytoone", "-conns", "2", "-senders", "3"}, 2, "-senders 3"},
		{[]string{"latency", "-variants", "tcp:thread/thread"}, 2, "flavours apply to nio only"},
		{[]string{"pingpong", "-max-size", "-1"}, 2, "-max-size -1 is negative"},
		{[]string{"collectives", "-max-size", "-4"}, 2, "-max-size -4 is negative"},
		{[]string{"pingpong", "-json", "/nonexistent-ibis/x.json"}, 2, `its folder /nonexistent-ibis is not there`},
		{[]string{"latency", "-plot", "/nonexistent-ibis/x.png"}, 2, `-plot "/nonexistent-ibis/x.png"`},
	} {
		code, _, errs := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", tc.args, code, tc.code, errs, tc.want)
		}
	}
}
