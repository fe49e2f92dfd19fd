package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/apptest"
	"github.com/ibisgo/ibis/internal/selfexec"
)

// TestLostRank kills a process that is not the root in the middle of a run under -np:
// its jobs run again elsewhere, the root prints the checked result, and the launcher
// says that a process was lost and exits 0.
func TestLostRank(t *testing.T) {
	const n = 42
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, err := selfexec.Start(ctx, []string{"-np", "3", "-n", fmt.Sprint(n), "-threshold", "25", "-progress", "100ms"},
		// A long heartbeat: a loaded machine must not make the launcher's registry give
		// up on a live process (the killed one is found dead at once: its connection
		// breaks).
		selfexec.WithoutEnv("IBIS_", apptest.EnvAsMain), selfexec.WithEnv(apptest.EnvAsMain+"=1", "IBIS_HEARTBEAT=10s"),
		selfexec.WithWaitDelay(15*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer func() { _ = c.Kill() }()

	// The root's first progress line names its rank: kill another.
	rootLine := regexp.MustCompile(`the root \(rank (\d+)\)`)
	var root int
	for {
		if m := rootLine.FindStringSubmatch(c.Stderr()); m != nil {
			root, _ = strconv.Atoi(m[1])
			break
		}
		select {
		case <-c.Done():
			t.Fatalf("fib ended before its first progress line: %v\n%s", c.Wait(), c.Stderr())
		case <-ctx.Done():
			t.Fatalf("no progress line; stderr:\n%s", c.Stderr())
		case <-time.After(20 * time.Millisecond):
		}
	}
	victim := (root + 1) % 3
	pid, err := rankPid(c.Pid(), victim)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = c.Wait()
	out, errText := c.Stdout(), c.Stderr()
	t.Logf("killed rank %d (the root is rank %d); stderr:\n%s", victim, root, errText)
	if err != nil {
		t.Fatalf("fib -np 3 with rank %d killed: %v\n%s", victim, err, errText)
	}
	if want := fmt.Sprintf("fib(%d) = %d (checked)", n, fibIter(n)); !strings.Contains(out, want) {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if want := fmt.Sprintf("process %d failed", victim); !strings.Contains(errText, want) ||
		!strings.Contains(errText, "1 of 3 processes were lost") {
		t.Errorf("stderr does not say that process %d was lost:\n%s", victim, errText)
	}
}

// rankPid finds the child of the launcher parent that runs with IBIS_RANK=rank.
func rankPid(parent, rank int) (int, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return 0, err
	}
	want := []byte(fmt.Sprintf("\x00IBIS_RANK=%d\x00", rank))
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid ...: the command may hold spaces, the fields after ")" not.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(parent) {
			continue
		}
		env, err := os.ReadFile(filepath.Join(filepath.Dir(f), "environ"))
		if err != nil {
			continue
		}
		if strings.Contains("\x00"+string(env), string(want)) {
			return strconv.Atoi(filepath.Base(filepath.Dir(f)))
		}
	}
	return 0, fmt.Errorf("no child of %d with IBIS_RANK=%d", parent, rank)
}
