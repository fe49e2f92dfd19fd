package grid_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/ipl"
)

// helloHosts are where examples/hello's 4 processes run: one in the open site, one in the
// firewalled site and two behind NAT.
var helloHosts = []string{"h2", "h3", "h5", "h6"}

// helloRequests is each client's number of requests (-n).
const helloRequests = 3

// appBound ends a hung run; no run relies on it.
const appBound = 3 * time.Minute

// pools numbers the pools the tests make, for unique names.
var pools atomic.Int64

// poolName returns a pool name no other run of the tests uses.
func poolName(what string) string {
	return fmt.Sprintf("grid-%s-%d-%d", what, time.Now().UnixNano(), pools.Add(1))
}

// testHello runs examples/hello, unchanged, as 4 processes on helloHosts as ibis-run starts
// them (the pool in the environment, the registry on h1), with the hub, and checks that
// every client got the sums it wanted and the server served them all.
func testHello(t *testing.T, g *grid, impl string) {
	exe := binary(t, "./examples/hello")
	ctx, cancel := context.WithTimeout(context.Background(), appBound)
	defer cancel()
	pool := poolName("hello")
	var procs []*selfexec.Child
	for rank, h := range helloHosts {
		env := []string{ipl.EnvRegistry + "=" + g.registry, ipl.EnvPool + "=" + pool,
			ipl.EnvPoolSize + "=" + strconv.Itoa(len(helloHosts)), "IBIS_RANK=" + strconv.Itoa(rank),
			ipl.EnvImpl + "=" + impl, ipl.EnvHub + "=" + g.hub}
		c, err := selfexec.Start(ctx, []string{"-n", strconv.Itoa(helloRequests), "-timeout", "2m"},
			selfexec.WithProgram(exe), selfexec.WithoutEnv("IBIS_"), selfexec.WithEnv(env...), on(t, g.c, h))
		if err != nil {
			t.Fatalf("starting hello on %s: %v", h, err)
		}
		t.Cleanup(c.Close)
		procs = append(procs, c)
	}
	var stdout, failures strings.Builder
	for i, c := range procs {
		select {
		case <-c.Done():
		case <-ctx.Done():
		}
		if err := c.Wait(); err != nil || ctx.Err() != nil {
			fmt.Fprintf(&failures, "--- hello on %s: %v %v\n%s", helloHosts[i], err, ctx.Err(), c.Stderr())
		}
		stdout.WriteString(c.Stdout())
	}
	if failures.Len() > 0 {
		t.Fatalf("hello across the sites failed:\n%s\nstandard output:\n%s", failures.String(), stdout.String())
	}
	got := helloResult(stdout.String())
	clients := len(helloHosts) - 1
	want := fmt.Sprintf("%d replies, 0 wrong; server: served %d requests; every client has left", clients*helloRequests, clients*helloRequests)
	if got != want {
		t.Fatalf("hello across the sites: %q, want %q\n%s", got, want, stdout.String())
	}
	t.Log(got)
}

var helloReply = regexp.MustCompile(`^client \(member \d+\): reply \d+: sum ([0-9.]+) \(want ([0-9.]+)\)$`)

// helloResult is what examples/hello's run shows whichever member wins the election (the
// member numbers, and so the sums, follow the order of the joins): how many replies came,
// how many had another sum than the one wanted, and the server's last line.
func helloResult(out string) string {
	replies, wrong := 0, 0
	served := ""
	for _, l := range strings.Split(out, "\n") {
		if m := helloReply.FindStringSubmatch(l); m != nil {
			replies++
			if m[1] != m[2] {
				wrong++
			}
		}
		if strings.HasPrefix(l, "server: served ") {
			served = l
		}
	}
	if served == "" {
		return ""
	}
	return fmt.Sprintf("%d replies, %d wrong; %s", replies, wrong, served)
}
