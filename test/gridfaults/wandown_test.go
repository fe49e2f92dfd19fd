package gridfaults_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	// outage is how long the wide-area link is down in the case that must survive it.
	outage = 10 * time.Second
	// streamBefore and streamAfter are messages the receiver must have before the link
	// goes down, and more after it is back, before the sender is told to stop.
	streamBefore = 300
	streamAfter  = 300
	// endBound bounds the end of a process once nothing holds it up any more: the link
	// is back, the sender was told to stop; room for a loaded machine.
	endBound = time.Minute
)

// TestWANDown streams numbered, checksummed messages of 16 KiB from h3 (s2) to h1 (s1), the
// registry on h2 (s1), and takes s2's wide-area link down in the middle (Cluster.WANDown):
//
//   - survives: for 10 s, with the defaults (heartbeat 2 s, death timeout 30 s, message
//     timeout 30 s). Nobody is declared dead, the connection survives: once the link is
//     back every message arrives, whole and in order, and every Finish returns nil.
//   - declared-dead: with a death timeout of 3 s (heartbeat 1 s), until the registry has
//     declared the sender dead. The receiver hears of the death and its connection from
//     the sender is cut (an error matching ipl.ErrConnectionLost); once the link is back
//     the sender's next Finish or Close fails with ipl.ErrConnectionLost and both
//     processes end, neither hangs. What the receiver got is whole and in order.
func TestWANDown(t *testing.T) {
	grid(t)
	for _, impl := range []string{"tcp", "nio"} {
		t.Run(impl+"/survives", func(t *testing.T) { wanDown(t, impl, false) })
		t.Run(impl+"/declared-dead", func(t *testing.T) { wanDown(t, impl, true) })
	}
}

func wanDown(t *testing.T, impl string, short bool) {
	c := grid(t)
	ctx, cancel := context.WithTimeout(context.Background(), caseBound)
	defer cancel()
	hb, death := "", ""
	if short {
		hb, death = "1s", "3s"
	}
	reg, regAddr := registryProc(ctx, t, c, "h2", hb, death)
	env := poolEnv(regAddr, impl)
	recv := startChild(t, c, "h1", "receiver", env...)
	recv.must(ctx, t, "ready")
	send := startChild(t, c, "h3", "sender", env...)
	if got := send.must(ctx, t, "connected epoch=0 "); num(t, got, "relayed")+num(t, got, "reversed") != 0 {
		t.Fatalf("%s; want a direct connection out of the firewalled site", got)
	}
	waitProgress(ctx, t, recv, streamBefore)
	if err := c.WANDown(ctx, 2); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	isUp := false
	restore := func() {
		if isUp {
			return
		}
		isUp = true
		if err := c.WANUp(context.Background(), 2); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(restore)
	if !short {
		time.Sleep(outage) // the fault itself, not a wait for a result
		restore()
		up := time.Now()
		n := waitProgress(ctx, t, recv, 0)
		t.Logf("the stream went on %v after the link came back (message %d)", time.Since(up).Round(time.Millisecond), n)
		waitProgress(ctx, t, recv, n+streamAfter)
		send.say(t, "stop")
		done := send.must(ctx, t, "done epoch=0 ")
		end := recv.must(ctx, t, "end epoch=0 ")
		if h, r := num(t, done, "handed"), num(t, end, "received"); h != r {
			t.Errorf("the sender handed over %d messages, the receiver got %d", h, r)
		} else {
			t.Logf("%d messages whole and in order, through a %v outage", r, outage)
		}
		send.end(t, endBound)
		recv.say(t, "quit")
		recv.end(t, endBound)
		reg.c.Close()
		for _, p := range []*proc{reg, send, recv} {
			for _, l := range p.rest() {
				if strings.HasPrefix(l, "died ") || strings.Contains(l, " Died ") {
					t.Errorf("the %s: %q; nobody may be declared dead", p.name, l)
				}
			}
		}
		return
	}
	// The registry's event log names the dead member by its address.
	died := reg.must(ctx, t, "")
	for !strings.Contains(died, " Died ") {
		died = reg.must(ctx, t, "")
	}
	t.Logf("registry, %v after the link went down: %s", time.Since(down).Round(time.Millisecond), brief(died))
	if !strings.Contains(died, host(t, c, "h3").Addr) {
		t.Errorf("the registry declared %q dead, not the sender on h3", brief(died))
	}
	heard := recv.must(ctx, t, "died ")
	lost := recv.must(ctx, t, "lost ")
	t.Logf("receiver: died %s; lost %s", heard, brief(lost))
	if !strings.HasPrefix(lost, "is=true") {
		t.Errorf("the receiver's error does not match ipl.ErrConnectionLost: %s", brief(lost))
	}
	restore()
	up := time.Now()
	failed := send.must(ctx, t, "failed epoch=0 ")
	t.Logf("sender, %v after the link came back: %s", time.Since(up).Round(time.Millisecond), brief(failed))
	if !strings.Contains(failed, "is=true") {
		t.Errorf("the sender's error does not match ipl.ErrConnectionLost: %s", brief(failed))
	}
	send.end(t, endBound)
	recv.say(t, "quit")
	got := recv.must(ctx, t, "result epoch=0 ")
	recv.end(t, endBound)
	n, h := num(t, got, "received"), num(t, failed, "handed")
	if n > h {
		t.Errorf("the receiver got %d messages; the sender handed over only %d", n, h)
	}
	// Where the receiver's cut notice reached the sender, it names what was taken.
	if m := takenRE.FindStringSubmatch(failed); m != nil {
		if taken, _ := strconv.ParseInt(m[1], 10, 64); taken != n {
			t.Errorf("the cut notice says the receiver took %d messages; it got %d", taken, n)
		}
	}
	t.Logf("%d messages handed over, %d received whole and in order; the sender was told how many: %t", h, n, takenRE.MatchString(failed))
}

// takenRE finds the count of a receiver's cut notice in a sender's error.
var takenRE = regexp.MustCompile(`after taking (\d+) whole messages`)

// waitProgress waits until the receiver reports at least n messages of epoch 0 (the next
// report, for n 0) and returns the count it reported.
func waitProgress(ctx context.Context, t *testing.T, recv *proc, n int64) int64 {
	t.Helper()
	for {
		got := num(t, "n="+recv.must(ctx, t, "progress 0 "), "n")
		if got >= n {
			return got
		}
	}
}

// rest returns the lines the process printed that were not read yet, once it has ended.
func (p *proc) rest() []string {
	var out []string
	for l := range p.lines {
		p.seen = append(p.seen, l)
		out = append(out, l)
	}
	return out
}
