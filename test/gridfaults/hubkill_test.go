package gridfaults_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// killAfter is how many messages the receiver must have before the hub is killed: the
// transfer is well under way (16 KiB each: 8 MiB).
const killAfter = 500

// retryWait bounds the sender's Connect after the kill.
const retryWait = 15 * time.Second

// TestHubKilled streams numbered, checksummed messages of 16 KiB from h5 (behind NAT, s3)
// to h3 (firewalled, s2): neither can dial the other, so the connection is relayed by
// ibis-hub on h1 (s1). Midway the hub is killed (SIGKILL). Both ends' connections fail
// with an error matching ipl.ErrConnectionLost, each naming the route ("relay
// via hub ADDR"); every message the receiver got is whole and in order, none twice. Then the
// sender connects again on a new port: with a second hub (on h2) in IBIS_HUB the
// connection is relayed by it and a second stream arrives whole; with no other hub the
// Connect fails and its error names the routes it tried.
func TestHubKilled(t *testing.T) {
	grid(t)
	for _, impl := range []string{"tcp", "nio"} {
		t.Run(impl+"/second-hub", func(t *testing.T) { hubKilled(t, impl, true) })
		t.Run(impl+"/one-hub", func(t *testing.T) { hubKilled(t, impl, false) })
	}
}

func hubKilled(t *testing.T, impl string, second bool) {
	c := grid(t)
	ctx, cancel := context.WithTimeout(context.Background(), caseBound)
	defer cancel()
	_, reg := registryProc(ctx, t, c, "h1", "", "")
	hubA, addrA := hubProc(ctx, t, c, "h1")
	hubs := addrA
	if second {
		_, addrB := hubProc(ctx, t, c, "h2")
		hubs += "," + addrB
	}
	env := poolEnv(reg, impl, ipl.EnvHub+"="+hubs)
	recv := startChild(t, c, "h3", "receiver", env...)
	recv.must(ctx, t, "ready")
	// With one hub, the new Connect has no route left: the relay is refused and a
	// firewall drops the direct dial's packets; the receiver published itself closed, so
	// that dial gives up after a second and the Connect fails before its deadline.
	send := startChild(t, c, "h5", "sender", append(env, envRetry+"=300", envConnectWait+"="+retryWait.String())...)
	if got := send.must(ctx, t, "connected epoch=0 "); num(t, got, "relayed") != 1 {
		t.Fatalf("the first connection: %s; want a relayed one", got)
	}
	for {
		if n := num(t, "n="+recv.must(ctx, t, "progress 0 "), "n"); n >= killAfter {
			break
		}
	}
	_ = hubA.c.Kill() // its error is the kill's: "signal: killed"
	if st := hubA.c.ProcessState(); st == nil || st.Exited() {
		t.Fatalf("the hub was not killed: %v", st)
	}
	killed := time.Now()
	route := "relay via hub " + addrA

	failed := send.must(ctx, t, "failed epoch=0 ")
	t.Logf("sender, %v after the kill: %s", time.Since(killed).Round(time.Millisecond), brief(failed))
	if !strings.Contains(failed, "is=true") {
		t.Errorf("the sender's error does not match ipl.ErrConnectionLost: %s", brief(failed))
	}
	if !strings.Contains(failed, route) {
		t.Errorf("the sender's error does not name the route %q: %s", route, brief(failed))
	}
	lost := recv.must(ctx, t, "lost ")
	t.Logf("receiver, %v after the kill: %s", time.Since(killed).Round(time.Millisecond), brief(lost))
	if !strings.HasPrefix(lost, "is=true") {
		t.Errorf("the receiver's error does not match ipl.ErrConnectionLost: %s", brief(lost))
	}
	if !strings.Contains(lost, route) {
		t.Errorf("the receiver's error does not name the route %q: %s", route, brief(lost))
	}
	handed := num(t, failed, "handed")

	if second {
		again := send.must(ctx, t, "connected epoch=1 ")
		t.Logf("sender, %v after the kill: connected again: %s", time.Since(killed).Round(time.Millisecond), brief(again))
		if num(t, again, "relayed") != 1 {
			t.Errorf("the new connection: %s; want a relayed one", brief(again))
		}
		if got := send.must(ctx, t, "done epoch=1 "); num(t, got, "handed") != 300 {
			t.Errorf("the second stream: %s", got)
		}
		if got := recv.must(ctx, t, "end epoch=1 "); num(t, got, "received") != 300 {
			t.Errorf("the second stream at the receiver: %s", got)
		}
	} else {
		failed := send.must(ctx, t, "connect-failed epoch=1 ")
		t.Logf("sender, %v after the kill: %s", time.Since(killed).Round(time.Millisecond), brief(failed))
		for _, want := range []string{route, "tried", host(t, c, "h3").Addr} {
			if !strings.Contains(failed, want) {
				t.Errorf("the failed Connect does not name the route %q it tried: %s", want, brief(failed))
			}
		}
	}
	send.end(t, time.Minute)
	recv.say(t, "quit")
	got := recv.must(ctx, t, "result epoch=0 ")
	recv.end(t, time.Minute)
	if n := num(t, got, "received"); n > handed || n < killAfter {
		t.Errorf("the receiver got %d messages of the first stream whole and in order; the sender handed over %d (and at least %d arrived before the kill)",
			n, handed, killAfter)
	} else {
		t.Logf("first stream: %d messages handed over, %d received in order, %d lost with the connection", handed, n, handed-n)
	}
}
