package registry_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ibisgo/ibis/registry"
)

// lockedBuffer collects a child's stderr while it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// child is a process running this test binary in a child mode.
type child struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdout *bufio.Reader
	stderr *lockedBuffer
	gone   bool
}

// startChild runs this test binary with env added, and returns once it
// started; the process is killed at the end of the test if it still runs.
func startChild(t *testing.T, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "GORACE=atexit_sleep_ms=0"), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{t: t, cmd: cmd, stdout: bufio.NewReader(out), stderr: &lockedBuffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.kill)
	return c
}

// line returns the child's next line of output.
func (c *child) line() string {
	c.t.Helper()
	l, err := c.stdout.ReadString('\n')
	if err != nil {
		c.t.Fatalf("child said nothing: %v (stderr:\n%s)", err, c.stderr.String())
	}
	return strings.TrimSpace(l)
}

// kill sends SIGKILL and reaps the process.
func (c *child) kill() {
	if c.gone {
		return
	}
	c.gone = true
	_ = c.cmd.Process.Kill()
	_, _ = io.Copy(io.Discard, c.stdout)
	_ = c.cmd.Wait()
}

// startServerProcess runs a registry server in a child process on addr
// and returns it with the address it listens on.
func startServerProcess(t *testing.T, addr, grace string, env ...string) (*child, string) {
	t.Helper()
	c := startChild(t, append([]string{serverAddrEnv + "=" + addr, serverGraceEnv + "=" + grace}, env...)...)
	l := c.line()
	got, ok := strings.CutPrefix(l, "serving ")
	if !ok {
		t.Fatalf("server says %q (stderr:\n%s)", l, c.stderr.String())
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
