package gridfaults_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/vcluster"
)

const (
	// lossShare is the share of packets the emulator drops between s1 and s2.
	lossShare = 0.05
	// lossMsgs and lossSize make the stream of the loss case: 16 MiB.
	lossMsgs = 2048
	lossSize = 8 << 10
	// envCC, when set, is the TCP congestion control of the loss case's hosts instead of
	// what their namespaces inherited from the machine (reno or bbr here: what
	// net.ipv4.tcp_allowed_congestion_control lets a namespace choose).
	envCC = "GRIDFAULTS_CC"
)

// TestWANLoss streams 2,048 numbered, checksummed messages of 8 KiB from h3 (s2) to h1 (s1),
// first with no loss, then with 5% of the packets between the two sites dropped by the
// emulator (Cluster.SetWAN on both sites), on tcp and nio. Every message arrives whole,
// once and in order (the receiver checks each); the emulator did drop packets. The
// throughput of both streams is logged (the figure of docs/GRIDS.md, "Faults"); no speed
// is asserted. How much 5% loss costs depends on the TCP congestion control of the hosts
// (logged; GRIDFAULTS_CC=reno sets it).
func TestWANLoss(t *testing.T) {
	c := grid(t)
	cc := congestion(t, c, "h3", os.Getenv(envCC))
	congestion(t, c, "h1", os.Getenv(envCC))
	for _, impl := range []string{"tcp", "nio"} {
		t.Run(impl, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), caseBound)
			defer cancel()
			_, reg := registryProc(ctx, t, c, "h2", "", "")
			for _, loss := range []float64{0, lossShare} {
				setLoss(ctx, t, loss)
				before, err := c.WANStats(ctx)
				if err != nil {
					t.Fatal(err)
				}
				env := poolEnv(reg, impl, envMsgs+"="+strconv.Itoa(lossMsgs), envSize+"="+strconv.Itoa(lossSize))
				recv := startChild(t, c, "h1", "receiver", env...)
				recv.must(ctx, t, "ready")
				send := startChild(t, c, "h3", "sender", env...)
				done := send.must(ctx, t, "done epoch=0 ")
				end := recv.must(ctx, t, "end epoch=0 ")
				send.end(t, endBound)
				recv.say(t, "quit")
				recv.end(t, endBound)
				after, err := c.WANStats(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if h, r := num(t, done, "handed"), num(t, end, "received"); h != lossMsgs || r != lossMsgs {
					t.Errorf("loss %v: the sender handed over %d messages, the receiver got %d; want %d", loss, h, r, lossMsgs)
				}
				dropped := after.Total.Lost - before.Total.Lost
				if loss > 0 && dropped == 0 {
					t.Errorf("loss %v: the emulator dropped no packet", loss)
				}
				secs, err := strconv.ParseFloat(fields(end)["seconds"], 64)
				if err != nil || secs <= 0 {
					t.Fatalf("no duration in %q", end)
				}
				bytes := num(t, end, "bytes")
				passed := after.Total.Packets - before.Total.Packets
				t.Logf("loss %v%%, %s: %d messages (%d bytes) whole and in order in %v: %.2f Mbit/s; the emulator passed %d packets, dropped %d",
					loss*100, cc, lossMsgs, bytes, time.Duration(secs*float64(time.Second)).Round(time.Millisecond),
					float64(bytes)*8/secs/1e6, passed, dropped)
			}
		})
	}
}

// setLoss sets the loss of s1's and s2's links (a packet between them is dropped with the
// mean of the two); the test's cleanup sets no loss again.
func setLoss(ctx context.Context, t *testing.T, loss float64) {
	t.Helper()
	c := grid(t)
	for _, s := range []int{1, 2} {
		if err := c.SetWAN(ctx, s, wanDelay, loss); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, s := range []int{1, 2} {
			if err := c.SetWAN(context.Background(), s, wanDelay, 0); err != nil {
				t.Error(err)
			}
		}
	})
}

// congestion sets the TCP congestion control of host h to cc (none when ""), restored by
// the test's cleanup, and returns the one in use.
func congestion(t *testing.T, c *vcluster.Cluster, h, cc string) string {
	t.Helper()
	const file = "/proc/sys/net/ipv4/tcp_congestion_control"
	out, err := c.Command(context.Background(), h, "cat", file).Output()
	if err != nil {
		t.Fatalf("reading %s on %s: %v", file, h, err)
	}
	was := strings.TrimSpace(string(out))
	if cc == "" || cc == was {
		return was
	}
	set := func(v string) error {
		if out, err := c.Command(context.Background(), h, "sh", "-c", "echo "+v+" >"+file).CombinedOutput(); err != nil {
			return fmt.Errorf("setting %s to %s on %s: %v: %s", file, v, h, err, out)
		}
		return nil
	}
	if err := set(cc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := set(was); err != nil {
			t.Error(err)
		}
	})
	return cc
}
