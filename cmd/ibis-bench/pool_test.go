package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/cluster"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// TestExistingPool runs pingpong the way ibis-run does: a registry started
// elsewhere and two processes given the same command and the pool's environment;
// whichever is elected coordinator prints the tables, the other serves it.
func TestExistingPool(t *testing.T) {
	srv, err := registry.StartEmbedded("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	pool := fmt.Sprintf("existing-%d", time.Now().UnixNano())
	args := []string{"pingpong", "-sizes", "0,1024", "-reps", "3", "-min-batch", "0", "-warmup", "1", "-types", "bytes", "-q"}
	enc, _ := json.Marshal(args)
	c, err := selfexec.Start(context.Background(), nil, selfexec.WithEnv(cluster.EnvPeerArgs+"="+string(enc),
		ipl.EnvRegistry+"="+srv.Addr(), ipl.EnvPool+"="+pool, ipl.EnvPoolSize+"=2"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	code, out, errs := runCmd(t, append(args, "-registry", srv.Addr(), "-pool", pool, "-pool-size", "2")...)
	werr := c.Wait()
	if code != 0 || werr != nil {
		t.Fatalf("this process: exit %d, %s\nother: %v, %s", code, errs, werr, c.Stderr())
	}
	peerOut := c.Stdout()
	printed := 0
	for _, o := range []string{out, peerOut} {
		if strings.Contains(o, "pingpong bytes") {
			printed++
		}
	}
	if printed != 1 {
		t.Fatalf("%d processes printed the report\nthis:\n%s\nother:\n%s", printed, out, peerOut)
	}
	if !strings.Contains(out+peerOut, "of pool "+pool) {
		t.Errorf("the report does not name the pool:\n%s%s", out, peerOut)
	}
}

func TestExistingPoolNeedsSize(t *testing.T) {
	t.Setenv(ipl.EnvPoolSize, "")
	code, _, errs := runCmd(t, "pingpong", "-registry", "127.0.0.1:1", "-q")
	if code != 1 || !strings.Contains(errs, "must be closed-world") {
		t.Fatalf("exit %d, %q", code, errs)
	}
	code, _, errs = runCmd(t, "masterworker", "-registry", "127.0.0.1:1", "-pool-size", "1", "-q")
	if code != 1 || !strings.Contains(errs, "at least 2 members") {
		t.Fatalf("exit %d, %q", code, errs)
	}
}
