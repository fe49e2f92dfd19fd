package cluster_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/netns"
)

// The registry's failure detector in the link-cut tests: a member silent for cutDeath is
// declared dead (docs/RELIABILITY.md, "The registry").
const (
	cutHeartbeat = time.Second
	cutDeath     = 4 * time.Second
	// cutBound is how long after the cut (resp. after the link is back) every process must
	// have ended: the death timeout, the pings that find it, the cut connections and a
	// process's exit take a few seconds; the rest is room for a loaded machine. A bound,
	// not a speed: no run is expected to come near it.
	cutBound = 3*cutDeath + 60*time.Second
)

// TestLinkCutAcrossHosts runs a pool of 4 processes on 4 virtual hosts (the registry server
// on the first, heartbeat 1 s, death timeout 4 s), takes one host's link down in the
// middle of the run (`ip link set down` on its cable at the bridge) and keeps it down until
// the others have ended, then brings it up again. On tcp and on nio:
//
//   - sor (mpj): the registry declares the cut process dead; the others end within the
//     bound with status 1 and mpj's error (matching ipl.ErrConnectionLost): the cut rank
//     lost (at least one of them names it), or a survivor that closed its world; once its
//     link is back, the cut process fails too.
//   - fib (dc, loss tolerated): the root runs the cut process's jobs again and prints the
//     checked result, the others end normally, and the cut process ends with dc's
//     ErrCutOff once its link is back (docs/DC.md).
func TestLinkCutAcrossHosts(t *testing.T) {
	nw := newNetwork(t, 4)
	hosts := nw.Hosts()
	for _, impl := range []string{"tcp", "nio"} {
		t.Run(impl+"/sor", func(t *testing.T) { cutSOR(t, hosts, impl) })
		t.Run(impl+"/fib", func(t *testing.T) { cutFib(t, hosts, impl) })
	}
}

// cutStart starts the registry server on the first host and np processes of the program,
// rank k on host k.
func cutStart(ctx context.Context, t *testing.T, hosts []*netns.Host, impl, pkg string, args ...string) (*registryServer, *job) {
	t.Helper()
	reg := startRegistry(ctx, t, hosts[0], "-heartbeat", cutHeartbeat.String(), "-death-timeout", cutDeath.String(), "-events")
	l := envLauncher{hosts: hosts, registry: reg.addr, impl: impl}
	return reg, l.start(ctx, t, binary(t, pkg), len(hosts), args...)
}

// waitStderr waits until the process's standard error matches re and returns the match.
func waitStderr(ctx context.Context, p *proc, re *regexp.Regexp) ([]string, error) {
	for {
		if m := re.FindStringSubmatch(p.c.Stderr()); m != nil {
			return m, nil
		}
		select {
		case <-p.c.Done():
			if m := re.FindStringSubmatch(p.c.Stderr()); m != nil {
				return m, nil
			}
			return nil, fmt.Errorf("rank %d ended (%v) before printing %q:\n%s", p.rank, p.c.Wait(), re, p.c.Stderr())
		case <-ctx.Done():
			return nil, fmt.Errorf("rank %d did not print %q: %w\n%s", p.rank, re, ctx.Err(), p.c.Stderr())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitDied waits, up to cutBound after the cut, for the registry's Died event of the cut
// process (the event log names it by its address).
func waitDied(t *testing.T, reg *registryServer, v *proc, cutAt time.Time) {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), cutAt.Add(cutBound))
	defer cancel()
	l, err := reg.waitLine(ctx, " Died ", "@"+v.host.Addr+":")
	if err != nil {
		t.Fatalf("the registry did not declare the cut rank %d dead: %v", v.rank, err)
	}
	t.Logf("registry: %s", l)
}

// waitAnyStderr waits until the standard error of one of the job's processes matches re
// and returns the match.
func waitAnyStderr(ctx context.Context, j *job, re *regexp.Regexp) ([]string, error) {
	for {
		for _, p := range j.procs {
			if m := re.FindStringSubmatch(p.c.Stderr()); m != nil {
				return m, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no process printed %q: %w\n%s", re, ctx.Err(), j.stderr())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// cut takes h's link down and returns a function that brings it up again (also called by
// the test's cleanup, once).
func cut(ctx context.Context, t *testing.T, h *netns.Host) (restore func()) {
	t.Helper()
	if err := h.LinkDown(ctx); err != nil {
		t.Fatal(err)
	}
	up := false
	restore = func() {
		if up {
			return
		}
		up = true
		if err := h.LinkUp(context.Background()); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(restore)
	return restore
}

// endWithin waits until the process has ended, at most bound after since (else the test
// fails), and returns its exit status (-1: killed by a signal).
func endWithin(t *testing.T, p *proc, bound time.Duration, since time.Time) int {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), since.Add(bound))
	defer cancel()
	select {
	case <-p.c.Done():
	case <-ctx.Done():
		t.Fatalf("rank %d on %s did not end within %v:\n%s", p.rank, p.host.Addr, bound, p.c.Stderr())
	}
	t.Logf("rank %d on %s ended %v later with status %d", p.rank, p.host.Addr,
		time.Since(since).Round(100*time.Millisecond), p.c.ExitCode())
	return p.c.ExitCode()
}

// The errors of mpj (go doc ./mpj, "Failures and shutdown"): a rank whose connection from a
// peer broke names it; a rank that waited only for a survivor learns of the failure when
// that survivor closes its world. Both match ipl.ErrConnectionLost.
var (
	lostPeer   = regexp.MustCompile(`mpj: rank (\d+) lost peer rank (\d+) \(it died or the connection broke: .*connection lost`)
	peerClosed = regexp.MustCompile(`mpj: peer rank (\d+) closed its world .*: ipl: connection lost`)
)

func cutSOR(t *testing.T, hosts []*netns.Host, impl string) {
	ctx, cancel := context.WithTimeout(context.Background(), appBound)
	defer cancel()
	// A grid large enough that it does not converge for minutes: the run ends by the cut.
	reg, j := cutStart(ctx, t, hosts, impl, "./apps/sor", "-n", "4000", "-iters", "100000000", "-timeout", "5m")
	// Rank 0's first progress line comes 3 s into the iterations.
	if _, err := waitStderr(ctx, j.procs[0], regexp.MustCompile(`sor: iteration \d+`)); err != nil {
		t.Fatal(err)
	}
	const victim = 2
	namedVictim := 0
	v := j.procs[victim]
	restore := cut(ctx, t, v.host)
	cutAt := time.Now()
	waitDied(t, reg, v, cutAt)
	for _, p := range j.procs {
		if p.rank == victim {
			continue
		}
		if code := endWithin(t, p, cutBound, cutAt); code != 1 {
			t.Errorf("rank %d ended with status %d, want 1 (the lost peer)", p.rank, code)
		}
		switch m, c := lostPeer.FindStringSubmatch(p.c.Stderr()), peerClosed.FindStringSubmatch(p.c.Stderr()); {
		case m != nil:
			if peer, _ := strconv.Atoi(m[2]); peer == victim {
				namedVictim++
			}
			t.Logf("rank %d: %s", p.rank, firstLine(m[0], p.c.Stderr()))
		case c != nil:
			t.Logf("rank %d: %s", p.rank, firstLine(c[0], p.c.Stderr()))
		default:
			t.Errorf("rank %d names neither a lost peer nor one that closed its world:\n%s", p.rank, p.c.Stderr())
		}
	}
	if namedVictim == 0 {
		t.Errorf("no process names the cut rank %d as lost:\n%s", victim, j.stderr())
	}
	restore()
	upAt := time.Now()
	if code := endWithin(t, v, cutBound, upAt); code == 0 {
		t.Errorf("the cut rank %d ended with status 0 after it was declared dead:\n%s", victim, v.c.Stderr())
	}
	t.Logf("the cut rank %d: %s", victim, lastLine(v.c.Stderr()))
}

var fibRoot = regexp.MustCompile(`the root \(rank (\d+)\)`)

func cutFib(t *testing.T, hosts []*netns.Host, impl string) {
	ctx, cancel := context.WithTimeout(context.Background(), appBound)
	defer cancel()
	const n = 44
	reg, j := cutStart(ctx, t, hosts, impl, "./apps/fib", "-n", strconv.Itoa(n), "-threshold", "20",
		"-progress", "200ms", "-timeout", "5m")
	// The root's first progress line (the pool has formed, jobs are being stolen) names
	// its rank: cut another, not on the registry's host.
	m, err := waitAnyStderr(ctx, j, fibRoot)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := strconv.Atoi(m[1])
	victim := 1
	if victim == root {
		victim = 2
	}
	t.Logf("the root is rank %d; cutting rank %d", root, victim)
	v := j.procs[victim]
	restore := cut(ctx, t, v.host)
	cutAt := time.Now()
	waitDied(t, reg, v, cutAt)
	for _, p := range j.procs {
		if p.rank == victim {
			continue
		}
		if code := endWithin(t, p, cutBound, cutAt); code != 0 {
			t.Errorf("rank %d ended with status %d, want 0:\n%s", p.rank, code, p.c.Stderr())
		}
	}
	want := fmt.Sprintf("fib(%d) = %d (checked)", n, fibOf(n))
	if got := fibResult(j.stdout()); got != want {
		t.Errorf("result %q, want %q\n%s", got, want, j.stderr())
	}
	restore()
	upAt := time.Now()
	if code := endWithin(t, v, cutBound, upAt); code == 0 {
		t.Errorf("the cut rank %d ended with status 0 after it was declared dead:\n%s", victim, v.c.Stderr())
	}
	if !strings.Contains(v.c.Stderr(), "cut off") {
		t.Errorf("the cut rank %d does not say it was cut off:\n%s", victim, v.c.Stderr())
	}
	t.Logf("the cut rank %d: %s", victim, lastLine(v.c.Stderr()))
}

func fibOf(n int) int64 {
	a, b := int64(0), int64(1)
	for range n {
		a, b = b, a+b
	}
	return a
}

// firstLine is the line of text that contains s.
func firstLine(s, text string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return s
}

// lastLine is the last non-empty line of text.
func lastLine(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	return lines[len(lines)-1]
}
