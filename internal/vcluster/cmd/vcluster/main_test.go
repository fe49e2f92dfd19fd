package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/internal/vcluster"
)

func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"nonesuch"}, {"up", "-hosts", "x"}, {"up", "-rate", "fast"},
		{"exec"}, {"exec", "h1"}, {"mpirun", "--", "true"}, {"srun"},
		{"up", "-wan-delay", "1ms"}, {"up", "-sites", "2", "-wan-loss", "x"}, {"up", "-sites", "2", "-firewall", "a"},
		{"wan"}, {"wan", "down"}, {"wancheck", "h1"}} {
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

// envChild makes the test binary the command, on the cluster id it names.
const envChild = "VCLUSTER_CMD_TEST_ID"

func TestMain(m *testing.M) {
	if cid := os.Getenv(envChild); cid != "" {
		id = cid
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}

// TestKilledUp stops `up -slurm` while its daemons start: by SIGINT and SIGTERM, after which
// nothing of the cluster is left, and by SIGKILL, after which `down` removes it all.
func TestKilledUp(t *testing.T) {
	if err := vcluster.Unavailable(vcluster.NeedSlurm); err != nil {
		if os.Getenv("IBIS_VCLUSTER_REQUIRE") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			cid := "ivc-clikill" + strconv.Itoa(os.Getpid())
			defer func() { _ = vcluster.Remove(cid) }()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			child, err := selfexec.Start(ctx, []string{"up", "-hosts", "3", "-slurm"},
				selfexec.WithEnv(envChild+"="+cid), selfexec.WithCombinedOutput())
			if err != nil {
				t.Fatal(err)
			}
			defer child.Close()
			conf := filepath.Join(vcluster.StateRoot, cid, "slurm.conf")
			for {
				if _, err := os.Stat(conf); err == nil {
					break
				}
				select {
				case <-child.Done():
					t.Fatalf("up ended before writing %s:\n%s", conf, child.Output())
				case <-ctx.Done():
					t.Fatal(ctx.Err())
				case <-time.After(10 * time.Millisecond):
				}
			}
			if err := child.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err = child.Wait()
			switch {
			case err == nil:
				t.Logf("up was done before %v came; removing its cluster", sig)
				_ = vcluster.Remove(cid)
			case sig == syscall.SIGKILL:
				var out, errb bytes.Buffer
				id = cid
				if code := run([]string{"down"}, &out, &errb); code != 0 {
					t.Fatalf("down: %d\n%s", code, errb.String())
				}
			}
			if ns, _ := filepath.Glob("/run/netns/" + cid + "-*"); len(ns) > 0 {
				t.Errorf("namespaces left: %v\n%s", ns, child.Output())
			}
			if _, err := os.Stat(filepath.Join(vcluster.StateRoot, cid)); err == nil {
				t.Errorf("state directory left\n%s", child.Output())
			}
			if out, _ := exec.Command("pgrep", "-f", filepath.Join(vcluster.StateRoot, cid)+"/").Output(); len(out) > 0 {
				t.Errorf("processes left: %s", out)
			}
		})
	}
}
