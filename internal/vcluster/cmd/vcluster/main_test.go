package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/internal/vcluster"
)

func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"nonesuch"}, {"up", "-hosts", "x"}, {"up", "-rate", "fast"},
		{"exec"}, {"exec", "h1"}, {"mpirun", "--", "true"}, {"srun"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code == 0 || errb.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q; want an error", args, code, errb.String())
		}
	}
}

// TestUpExecDown builds the command's cluster (under a test id), runs a command on h2 and
// removes the cluster.
func TestUpExecDown(t *testing.T) {
	if err := vcluster.Unavailable(); err != nil {
		if os.Getenv("IBIS_VCLUSTER_REQUIRE") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	id, persist = "ivc-clitest"+strconv.Itoa(os.Getpid()), false
	defer func() { _ = vcluster.Remove(id) }()
	var out, errb bytes.Buffer
	if code := run([]string{"up", "-hosts", "2", "-subnet", "13"}, &out, &errb); code != 0 {
		t.Fatalf("up: %d\n%s", code, errb.String())
	}
	if !strings.Contains(out.String(), "h2   10.203.13.2") {
		t.Errorf("up printed:\n%s", out.String())
	}
	if code := run([]string{"up", "-hosts", "2"}, &out, &errb); code == 0 {
		t.Errorf("a second up: exit 0")
	}
	out.Reset()
	if code := run([]string{"exec", "h2", "--", "sh", "-c", "cat /proc/sys/kernel/hostname; exit 3"}, &out, &errb); code != 3 || strings.TrimSpace(out.String()) != "h2" {
		t.Errorf("exec on h2: exit %d, %q; want 3, h2", code, out.String())
	}
	if code := run([]string{"down"}, &out, &errb); code != 0 {
		t.Fatalf("down: %d\n%s", code, errb.String())
	}
	if code := run([]string{"status"}, &out, &errb); code == 0 {
		t.Errorf("status after down: exit 0")
	}
}
