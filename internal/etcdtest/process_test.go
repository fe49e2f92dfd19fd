package etcdtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/selfexec"
)

// orphanDirEnv makes TestClusterDiesWithTestBinary the child that starts a cluster,
// writes its etcd's pid to a file in the directory named and waits to be killed.
const orphanDirEnv = "IBIS_ETCDTEST_ORPHAN_DIR"

// TestClusterDiesWithTestBinary kills (SIGKILL) a test binary that runs an etcd
// node: no t.Cleanup runs, and the kernel must end the node (Pdeathsig).
func TestClusterDiesWithTestBinary(t *testing.T) {
	if dir := os.Getenv(orphanDirEnv); dir != "" {
		c := StartCluster(t, 1)
		pid := strconv.Itoa(c.nodes[0].proc.Pid)
		if err := os.WriteFile(filepath.Join(dir, "pid.tmp"), []byte(pid), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "pid.tmp"), filepath.Join(dir, "pid")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(waitFor) // the parent kills this process long before
		t.Fatal("child not killed by its parent")
	}
	etcdBinary(t) // skip early where there is no etcd

	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitFor)
	defer cancel()
	// The killed child cannot remove its temp dirs: they go under this test's.
	child, err := selfexec.Start(ctx, []string{"-test.run=^TestClusterDiesWithTestBinary$", "-test.count=1", "-test.v"},
		selfexec.WithEnv(orphanDirEnv+"="+dir, "TMPDIR="+dir))
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()

	var pid int
	deadline := time.Now().Add(waitFor)
	for pid == 0 {
		b, err := os.ReadFile(filepath.Join(dir, "pid"))
		if err == nil {
			if pid, err = strconv.Atoi(string(b)); err != nil {
				t.Fatalf("child wrote pid %q: %v", b, err)
			}
			break
		}
		select {
		case <-child.Done():
			t.Fatalf("child exited before starting etcd: %v\n%s", child.Wait(), child.Output())
		case <-time.After(pollInterval):
		}
		if time.Now().After(deadline) {
			t.Fatalf("child started no etcd within %v:\n%s", waitFor, child.Output())
		}
	}
	if processGone(pid) {
		t.Fatalf("etcd %d not running before the child was killed", pid)
	}

	_ = child.Kill() // its error is the "signal: killed" exit status
	for !processGone(pid) {
		if time.Now().After(deadline.Add(waitFor)) {
			t.Fatalf("etcd %d still runs after its test binary was killed", pid)
		}
		time.Sleep(pollInterval)
	}
}

// processGone reports whether process pid has ended (a zombie that nobody reaped
// has ended too).
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
}

// TestClusterStartRetriesTakenPort has the first choice of ports include one that
// another listener holds: etcd cannot bind it, and StartCluster must try again.
func TestClusterStartRetriesTakenPort(t *testing.T) {
	etcdBinary(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	calls := 0
	pickPorts = func(n int) ([]int, error) {
		calls++
		ports, err := freePorts(n)
		if calls == 1 && err == nil {
			ports[0] = taken.Addr().(*net.TCPAddr).Port
		}
		return ports, err
	}
	t.Cleanup(func() { pickPorts = freePorts })

	c := StartCluster(t, 1)
	if calls != 2 {
		t.Fatalf("ports picked %d times, want 2 (the first set had a taken port)", calls)
	}
	if log := readTail(c.LogPath(0), logTailLines); strings.Contains(log, "address already in use") {
		t.Fatalf("the running node's log (second attempt) shows a bind failure:\n%s", log)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if _, err := newClient(t, c.Endpoints()).Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
}
