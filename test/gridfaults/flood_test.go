package gridfaults_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/hub"
	"github.com/ibisgo/ibis/ipl"
)

const (
	// strangers is how many connections the stranger opens to the hub.
	strangers = 6000
	// floodRSSBound bounds the hub process's resident memory during the flood. The hub
	// holds at most -max-conns-per-ip (2,048) connections of one address, each a
	// goroutine and a small buffer (about 12 KiB), and -max-handshakes-per-ip (256) of
	// them in the pool check at once: about 25 MiB at worst over the ~7 MiB of an idle
	// hub; the bound leaves room for the Go runtime's own growth.
	floodRSSBound = 64 << 20
	// floodProgress is how many messages the relayed stream must move while the
	// stranger holds its connections open.
	floodProgress = 300
)

// TestHubFlood floods a hub that has a pool secret (-secret-file) from h2 (s1), a host that
// does not know it: 6,000 connections, a third raw TCP that says nothing and stays open, a
// third 4 KiB of random bytes, a third the pool check with a wrong secret. None passes the
// pool check, the hub's resident memory (VmRSS in /proc) stays under floodRSSBound, and a
// pool whose members relay through the hub at the same time (h5 behind NAT to h3 behind a
// firewall, with the secret) keeps streaming, whole and in order.
func TestHubFlood(t *testing.T) {
	c := grid(t)
	ctx, cancel := context.WithTimeout(context.Background(), caseBound)
	defer cancel()
	const secret = "gridfaults-flood-secret"
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, reg := registryProc(ctx, t, c, "h1", "", "", ipl.EnvPoolSecret+"="+secret)
	hubP, hubAddr := hubProc(ctx, t, c, "h1", "-secret-file", file)
	if l := hubP.must(ctx, t, "ibis-hub pools: "); !strings.HasPrefix(l, "authenticated") {
		t.Fatalf("ibis-hub with -secret-file: %q; want an authenticated hub", l)
	}
	env := poolEnv(reg, "tcp", ipl.EnvHub+"="+hubAddr, ipl.EnvPoolSecret+"="+secret)
	recv := startChild(t, c, "h3", "receiver", env...)
	recv.must(ctx, t, "ready")
	send := startChild(t, c, "h5", "sender", env...)
	if got := send.must(ctx, t, "connected epoch=0 "); num(t, got, "relayed") != 1 {
		t.Fatalf("%s; want a relayed connection", got)
	}
	waitProgress(ctx, t, recv, floodProgress)
	base, err := rss(hubP.c.Pid())
	if err != nil {
		t.Fatal(err)
	}
	peak := newPeak(hubP.c.Pid())
	defer peak.stop()

	pool := strings.TrimPrefix(env[1], ipl.EnvPool+"=")
	str := startChild(t, c, "h2", "stranger", envHub+"="+hubAddr, envStrangers+"="+strconv.Itoa(strangers), envPool+"="+pool)
	flood := time.Now()
	held := str.must(ctx, t, "holding ")
	t.Logf("the stranger made its connections in %v; holds %s silent ones", time.Since(flood).Round(time.Millisecond), held)
	n := waitProgress(ctx, t, recv, 0)
	waitProgress(ctx, t, recv, n+floodProgress)
	str.say(t, "stop")
	res := str.must(ctx, t, "result ")
	str.end(t, endBound)
	t.Logf("stranger: %s", res)
	if num(t, res, "passed") != 0 {
		t.Errorf("a wrong secret passed the hub's pool check: %s", res)
	}
	if num(t, res, "refused") == 0 || num(t, res, "dialed") == 0 {
		t.Errorf("the stranger was not refused: %s", res)
	}
	if n := num(t, res, "silent"); n > hub.DefaultMaxHandshakesPerIP {
		t.Errorf("the hub held %d silent connections of one address open, more than -max-handshakes-per-ip (%d)", n, hub.DefaultMaxHandshakesPerIP)
	}
	send.say(t, "stop")
	done := send.must(ctx, t, "done epoch=0 ")
	end := recv.must(ctx, t, "end epoch=0 ")
	if h, r := num(t, done, "handed"), num(t, end, "received"); h != r {
		t.Errorf("the sender handed over %d messages, the receiver got %d", h, r)
	}
	send.end(t, endBound)
	recv.say(t, "quit")
	recv.end(t, endBound)
	top := peak.stop()
	t.Logf("hub VmRSS: %d KiB before the flood, at most %d KiB during it (bound %d KiB)", base>>10, top>>10, floodRSSBound>>10)
	if top > floodRSSBound {
		t.Errorf("the hub's resident memory reached %d KiB, more than %d KiB", top>>10, floodRSSBound>>10)
	}
}

// rss reads the process's resident memory (VmRSS) in bytes from /proc.
func rss(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("the hub's memory: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("the hub's memory: VmRSS %q: %w", v, err)
			}
			return kib << 10, nil
		}
	}
	return 0, fmt.Errorf("the hub's memory: no VmRSS in /proc/%d/status", pid)
}

// peak samples a process's VmRSS every 20 ms until stop, which returns the largest.
type peak struct {
	once sync.Once
	quit chan struct{}
	done chan struct{}
	max  int64
}

func newPeak(pid int) *peak {
	p := &peak{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if v, err := rss(pid); err == nil && v > p.max {
				p.max = v
			}
			select {
			case <-tick.C:
			case <-p.quit:
				return
			}
		}
	}()
	return p
}

func (p *peak) stop() int64 {
	p.once.Do(func() { close(p.quit) })
	<-p.done
	return p.max
}
