package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// envMember makes the test binary run as a joinprobe member.
const envMember = "JOINPROBE_TEST_MEMBER"

func TestMain(m *testing.M) {
	if os.Getenv(envMember) != "" {
		err := run(context.Background(), time.Now(), nil, os.Getenv(envT0), os.Stdout, os.Stderr)
		if err != nil {
			os.Stderr.WriteString("joinprobe: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}

// Three processes of a closed-world pool each print one result line with their rank, the
// pool's size, and times since the launch began that are in order.
func TestPoolJoinTime(t *testing.T) {
	for _, impl := range []string{"tcp", "nio"} {
		t.Run(impl, func(t *testing.T) {
			const n = 3
			srv, err := registry.StartEmbedded("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = srv.Close() }()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			t0 := strconv.FormatInt(time.Now().UnixNano(), 10)
			children := make([]*selfexec.Child, n)
			for r := range n {
				c, err := selfexec.Start(ctx, []string{selfexec.NoTests},
					selfexec.WithoutEnv("IBIS_", "SLURM_", "SLURMD_", "OMPI_", "PMIX_", "PMI_"),
					selfexec.WithEnv(envMember+"=1", envT0+"="+t0, ipl.EnvRegistry+"="+srv.Addr(), ipl.EnvPool+"=jp-"+impl,
						ipl.EnvPoolSize+"="+strconv.Itoa(n), ipl.EnvRank+"="+strconv.Itoa(r), ipl.EnvImpl+"="+impl),
					selfexec.WithCombinedOutput())
				if err != nil {
					t.Fatal(err)
				}
				children[r] = c
			}
			seen := map[int]bool{}
			for r, c := range children {
				if err := c.Wait(); err != nil {
					t.Fatalf("rank %d: %v\n%s", r, err, c.Output())
				}
				f := result(t, c.Output())
				rank, _ := strconv.Atoi(f["rank"])
				started, err0 := strconv.ParseFloat(f["started"], 64)
				joined, err1 := strconv.ParseFloat(f["joined"], 64)
				closed, err2 := strconv.ParseFloat(f["closed"], 64)
				if rank != r || f["size"] != strconv.Itoa(n) || errors.Join(err0, err1, err2) != nil ||
					started < 0 || joined < started || closed < joined {
					t.Errorf("process %d printed %v", r, f)
				}
				seen[rank] = true
			}
			if len(seen) != n {
				t.Errorf("ranks %v, want 0..%d", seen, n-1)
			}
		})
	}
}

// result returns the fields of the one joinprobe-result line in out.
func result(t *testing.T, out string) map[string]string {
	t.Helper()
	var f map[string]string
	for line := range strings.Lines(out) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "joinprobe-result ")
		if !ok {
			continue
		}
		if f != nil {
			t.Fatalf("two result lines in:\n%s", out)
		}
		f = map[string]string{}
		for kv := range strings.FieldsSeq(rest) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
	}
	if f == nil {
		t.Fatalf("no result line in:\n%s", out)
	}
	return f
}

// Bad flags and a bad launch time are usage errors that say what was wrong; nothing joins.
func TestBadInput(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		args []string
		t0   string
		want string
	}{
		{[]string{"extra"}, "", `unexpected argument "extra"`},
		{[]string{"-timeout", "0s"}, "", "-timeout 0s"},
		{[]string{"-no-such-flag"}, "", "no-such-flag"},
		{nil, "soon", envT0 + `="soon"`},
		{nil, "-5", envT0 + `="-5"`},
		{nil, strconv.FormatInt(now.Add(time.Hour).UnixNano(), 10), "after this process started"},
	} {
		var stderr bytes.Buffer
		err := run(context.Background(), now, c.args, c.t0, &bytes.Buffer{}, &stderr)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("args %q, %s=%q: %v; want a usage error naming %q", c.args, envT0, c.t0, err, c.want)
		}
	}
}

// A process of an open pool (no launcher, no pool size) has no join time to report.
func TestOpenPool(t *testing.T) {
	for _, v := range []string{ipl.EnvRegistry, ipl.EnvPool, ipl.EnvPoolSize, ipl.EnvRank, "SLURM_PROCID", "SLURM_STEP_ID", "OMPI_COMM_WORLD_RANK"} {
		t.Setenv(v, "")
		_ = os.Unsetenv(v)
	}
	var stdout bytes.Buffer
	err := run(context.Background(), time.Now(), []string{"-timeout", "1m"}, "", &stdout, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "open pool") || stdout.Len() != 0 {
		t.Errorf("open pool: %v, printed %q", err, stdout.String())
	}
}
