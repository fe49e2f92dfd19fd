package vcluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/internal/selfexec"
)

// envRole makes the test binary a child: "listen", "dial ADDR" or "up".
const envRole = "VCLUSTER_TEST_ROLE"

// envRequire, set (as CI sets it), turns a skip for a missing tool into a failure.
const envRequire = "IBIS_VCLUSTER_REQUIRE"

// testBound ends a hung test step; no step relies on it.
const testBound = 3 * time.Minute

func TestMain(m *testing.M) {
	if role := os.Getenv(envRole); role != "" {
		os.Exit(runChild(role))
	}
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}

// need skips the test when the cluster cannot be built here, unless envRequire is set.
func need(t *testing.T, needs ...Need) {
	t.Helper()
	if err := Unavailable(needs...); err != nil {
		if os.Getenv(envRequire) != "" {
			t.Fatalf("%s is set, but: %v", envRequire, err)
		}
		t.Skip(err)
	}
}

func up(t *testing.T, opts ...Option) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testBound)
	defer cancel()
	c, err := Up(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	return c
}

// runChild is the test binary as a child process on a host.
func runChild(role string) int {
	host, _ := os.Hostname()
	switch {
	case role == "listen": // prints its port, then answers three diallers with its host name
		ln, err := net.Listen("tcp", ":0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(ln.Addr().(*net.TCPAddr).Port)
		for range 3 {
			conn, err := ln.Accept()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			line, _ := bufio.NewReader(conn).ReadString('\n')
			fmt.Fprintf(conn, "%s heard %s from %s\n", host, strings.TrimSpace(line), conn.RemoteAddr().(*net.TCPAddr).IP)
			conn.Close()
		}
		return 0
	case strings.HasPrefix(role, "dial "): // "dial ADDR TIMEOUT": dials, says its host name, prints the answer
		f := strings.Fields(role)
		d, _ := time.ParseDuration(f[2])
		conn, err := net.DialTimeout("tcp", f[1], d)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer conn.Close()
		fmt.Fprintln(conn, host)
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Print(line)
		return 0
	case role == "up": // builds a cluster with SLURM, prints its id, and waits to be killed
		c, err := Up(context.Background(), WithHosts(2), WithSlurm())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(c.ID())
		select {}
	}
	fmt.Fprintln(os.Stderr, "unknown role", role)
	return 2
}

// TestHosts builds 3 hosts: each has its host name, and a process on h2 and one on h3 reach
// a process on h1 by the name h1, over TCP, from their own addresses. With h3's link down a
// dial from h3 fails; with it up again one gets through.
func TestHosts(t *testing.T) {
	need(t)
	c := up(t, WithHosts(3), WithSubnet(11))
	ctx, cancel := context.WithTimeout(context.Background(), testBound)
	defer cancel()
	for _, h := range c.Hosts() {
		out, err := c.Command(ctx, h.Name, "cat", "/proc/sys/kernel/hostname").Output()
		if err != nil || strings.TrimSpace(string(out)) != h.Name {
			t.Errorf("hostname on %s: %q, %v", h.Name, out, err)
		}
	}
	p, _ := c.Exec("h1")
	ln, err := selfexec.Start(ctx, nil, selfexec.WithLauncher(p[0], p[1:]...),
		selfexec.WithEnv(envRole+"=listen"), selfexec.WithStdoutPipe())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port, err := bufio.NewReader(ln.StdoutPipe()).ReadString('\n')
	if err != nil {
		t.Fatalf("listener's port: %v\n%s", err, ln.Output())
	}
	dial := func(h, timeout string) (string, error) {
		p, _ := c.Exec(h)
		d, err := selfexec.Start(ctx, nil, selfexec.WithLauncher(p[0], p[1:]...),
			selfexec.WithEnv(envRole+"=dial h1:"+strings.TrimSpace(port)+" "+timeout))
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Wait(); err != nil {
			return "", fmt.Errorf("dialler on %s: %w\n%s", h, err, d.Output())
		}
		return strings.TrimSpace(d.Stdout()), nil
	}
	for _, h := range []string{"h2", "h3"} {
		got, err := dial(h, "1m")
		if err != nil {
			t.Fatal(err)
		}
		hh, _ := c.Host(h)
		if want := "h1 heard " + h + " from " + hh.Addr; got != want {
			t.Errorf("dialler on %s got %q, want %q", h, got, want)
		}
	}
	if err := c.LinkDown(ctx, "h3"); err != nil {
		t.Fatal(err)
	}
	if got, err := dial("h3", "1s"); err == nil {
		t.Fatalf("with h3's link down, h3 reached h1: %q", got)
	}
	if err := c.LinkUp(ctx, "h3"); err != nil {
		t.Fatal(err)
	}
	if _, err := dial("h3", "1m"); err != nil {
		t.Fatal(err)
	}
	if err := ln.Wait(); err != nil {
		t.Fatalf("listener: %v\n%s", err, ln.Output())
	}
	if _, err := c.Host("h4"); !errors.Is(err, ErrNoHost) {
		t.Errorf("Host(h4): %v, want ErrNoHost", err)
	}
	if err := c.Command(ctx, "h9", "true").Run(); !errors.Is(err, ErrNoHost) {
		t.Errorf("Command on h9: %v, want ErrNoHost", err)
	}
	closeLeavesNothing(t, c)
}

// closeLeavesNothing closes c and checks that nothing of it is left.
func closeLeavesNothing(t *testing.T, c *Cluster) {
	t.Helper()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	leftovers(t, c.ID())
}

// leftovers fails the test for anything of cluster id still on the machine.
func leftovers(t *testing.T, id string) {
	t.Helper()
	if ns := namespaces(id + "-"); len(ns) > 0 {
		t.Errorf("namespaces left: %v", ns)
	}
	dir := filepath.Join(StateRoot, id)
	if pids := processesNaming(dir + "/"); len(pids) > 0 {
		t.Errorf("processes of %s left: %v", dir, pids)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left: %v", dir, err)
	}
	if m, _ := filepath.Glob(filepath.Join(etcNetns, id+"-*")); len(m) > 0 {
		t.Errorf("left: %v", m)
	}
}

// TestRate gives each link a rate: the qdisc is on both ends of every cable.
func TestRate(t *testing.T) {
	need(t, NeedTC)
	c := up(t, WithHosts(2), WithRate(100e6))
	for _, h := range c.Hosts() {
		out, err := exec.Command("tc", "-n", h.Namespace, "qdisc", "show", "dev", "eth0").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "tbf") || !strings.Contains(string(out), "rate 100Mbit") {
			t.Errorf("%s's eth0: %v\n%s", h.Name, err, out)
		}
	}
	out, err := exec.Command("tc", "-n", c.ID()+"-sw", "qdisc", "show").CombinedOutput()
	if err != nil || strings.Count(string(out), "tbf") != 2 {
		t.Errorf("switch ports: %v\n%s", err, out)
	}
}

func TestInvalid(t *testing.T) {
	ctx := context.Background()
	for _, o := range []Option{WithHosts(0), WithHosts(251), WithCPUs(0), WithRate(10)} {
		if _, err := Up(ctx, o); !errors.Is(err, ErrInvalid) {
			t.Errorf("Up: %v, want ErrInvalid", err)
		}
	}
	for _, id := range []string{"x", "ivc-", "ivc-A", "ivc-a-b", "ivc-" + strings.Repeat("a", 27)} {
		if _, err := Up(ctx, WithID(id)); !errors.Is(err, ErrInvalid) {
			t.Errorf("Up(WithID(%q)): %v, want ErrInvalid", id, err)
		}
	}
	if _, err := Attach("ivc-nonesuch"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Attach: %v, want ErrInvalid", err)
	}
}
