package registry_test

import (
	"bufio"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/registry"
)

// child is a process running this test binary in a child mode.
type child struct {
	t      *testing.T
	c      *selfexec.Child
	stdout *bufio.Reader
}

// startChild runs this test binary with env added, and returns once it
// started; the process is killed at the end of the test if it still runs.
func startChild(t *testing.T, env ...string) *child {
	t.Helper()
	c, err := selfexec.Start(context.Background(), []string{selfexec.NoTests}, selfexec.WithStdoutPipe(), selfexec.WithEnv(env...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &child{t: t, c: c, stdout: bufio.NewReader(c.StdoutPipe())}
}

// line returns the child's next line of output.
func (c *child) line() string {
	c.t.Helper()
	l, err := c.stdout.ReadString('\n')
	if err != nil {
		c.t.Fatalf("child said nothing: %v (stderr:\n%s)", err, c.c.Stderr())
	}
	return strings.TrimSpace(l)
}

// kill sends SIGKILL and reaps the process.
func (c *child) kill() { c.c.Close() }

// startServerProcess runs a registry server in a child process on addr
// and returns it with the address it listens on.
func startServerProcess(t *testing.T, addr, grace string, env ...string) (*child, string) {
	t.Helper()
	c := startChild(t, append([]string{serverAddrEnv + "=" + addr, serverGraceEnv + "=" + grace}, env...)...)
	l := c.line()
	got, ok := strings.CutPrefix(l, "serving ")
	if !ok {
		t.Fatalf("server says %q (stderr:\n%s)", l, c.c.Stderr())
	}
	return c, got
}

// TestCrossProcessRegistryRestart kills a registry server process with
// SIGKILL, lets a member process die while it is down, and restarts the
// server on the same port (picked by the kernel at the first start). The
// in-process members must hear RegistryLost, get ErrRegistryLost from
// their calls, rejoin with the same identities, hear that the dead member
// died, and find their election, global name and sequence intact; a
// newcomer gets a fresh member number.
func TestCrossProcessRegistryRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	ctx := testContext(t)
	server, addr := startServerProcess(t, "127.0.0.1:0", "3s")
	c0 := joinAt(t, addr, "xr", registry.WithAddress("h:0"))
	c1 := joinAt(t, addr, "xr", registry.WithAddress("h:1"))
	if _, err := c0.Elect(ctx, "leader"); err != nil {
		t.Fatal(err)
	}
	if err := c1.Bind(ctx, "svc", "inbox"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c0.Sequence(ctx, "n"); err != nil {
			t.Fatal(err)
		}
	}
	member := startChild(t, childAddrEnv+"="+addr, childPoolEnv+"=xr")
	if l := member.line(); !strings.HasPrefix(l, "joined xr/2") {
		t.Fatalf("member process says %q", l)
	}
	dead := waitEvent(t, c0, "Joined of the member process", func(ev registry.Event) bool {
		return ev.Type == registry.Joined && ev.Member.Tag == "child"
	}).Member
	waitEvent(t, c1, "Joined of the member process", isEvent(registry.Joined, dead))
	before := c0.Members()

	server.kill() // SIGKILL
	for _, c := range []*registry.Client{c0, c1} {
		waitEvent(t, c, "RegistryLost", isLost(registry.LostReconnecting))
		if _, err := c.Elect(ctx, "leader"); !errors.Is(err, registry.ErrRegistryLost) {
			t.Fatalf("elect while the registry is down: %v", err)
		}
		if got := c.Members(); !reflect.DeepEqual(got, before) {
			t.Fatalf("members while the registry is down: %v", got)
		}
	}
	member.kill() // dies while the registry is down: nobody can tell yet

	startServerProcess(t, addr, "3s")
	for _, c := range []*registry.Client{c0, c1} {
		waitEvent(t, c, "Died of the member process", isEvent(registry.Died, dead))
		waitEvent(t, c, "RegistryRestored", isRestored)
		if got := ids(c.Members()); !reflect.DeepEqual(got, []string{"0", "1"}) {
			t.Fatalf("members after the restart: %v", got)
		}
		if w, err := c.ElectionResult(ctx, "leader"); err != nil || w != c0.Identity() {
			t.Fatalf("election after the restart: %v, %v", w, err)
		}
		if who, port, err := c.Lookup(ctx, "svc"); err != nil || who != c1.Identity() || port != "inbox" {
			t.Fatalf("global name after the restart: %v %q, %v", who, port, err)
		}
	}
	if v, err := c1.Sequence(ctx, "n"); err != nil || v != 2 {
		t.Fatalf("sequence after the restart: %d, %v", v, err)
	}
	newcomer := joinAt(t, addr, "xr")
	if got := newcomer.Identity().ID; got != "3" {
		t.Fatalf("newcomer after the restart got number %s, want 3 (0-2 were handed out before)", got)
	}
	if w, err := newcomer.Elect(ctx, "leader"); err != nil || w != c0.Identity() {
		t.Fatalf("newcomer's elect: %v, %v", w, err)
	}
}
