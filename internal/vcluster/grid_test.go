package vcluster

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// gridDelay is the grid tests' one-way delay between sites.
const gridDelay = 10 * time.Millisecond

// TestGrid builds three sites of two hosts, site 2 firewalled and site 3 behind NAT, and
// checks the wide area: delay on the packets between sites only, the firewall, the NAT,
// loss and a link taken down and up under a live connection.
func TestGrid(t *testing.T) {
	need(t, NeedTUN, NeedIPTables, NeedTC)
	c := up(t, WithSites(3, 2), WithWAN(gridDelay, 100e6, 0), WithFirewall(2), WithNAT(3))
	ctx, cancel := context.WithTimeout(context.Background(), testBound)
	defer cancel()

	sites := c.Sites()
	if len(sites) != 3 || strings.Join(sites[1].Hosts, ",") != "h3,h4" || !sites[1].Firewall || !sites[2].NAT ||
		!strings.HasPrefix(sites[2].Prefix, "192.168.") {
		t.Fatalf("sites %+v", sites)
	}
	if h, _ := c.Host("h5"); h.Site != 3 || !strings.HasPrefix(h.Addr, "192.168.3.") {
		t.Errorf("h5: %+v", h)
	}

	t.Run("delay", func(t *testing.T) {
		before := wanPackets(t, c)
		rtt, err := c.MeasureRTT(ctx, "h1", "h2", 5) // within site 1
		if err != nil {
			t.Fatal(err)
		}
		if n := wanPackets(t, c); n != before {
			t.Errorf("traffic within a site went through the emulator: %d packets", n-before)
		}
		t.Logf("within a site: %v", rtt)
		rtt, err = c.MeasureRTT(ctx, "h3", "h1", 20) // firewalled site out to site 1
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("between sites: %v", rtt)
		if rtt.Connect < 2*gridDelay || rtt.Echo < 2*gridDelay {
			t.Errorf("round trip %v between sites; the delay is %v each way", rtt, gridDelay)
		}
		if rtt.Connect > 10*gridDelay || rtt.Echo > 10*gridDelay {
			t.Errorf("round trip %v between sites: more than 5 times the %v set", rtt, 2*gridDelay)
		}
		if n := wanPackets(t, c); n <= before {
			t.Error("traffic between sites did not go through the emulator")
		}
	})

	t.Run("firewall", func(t *testing.T) {
		// A firewall drops; the dial can only time out, whatever the machine's load.
		if err := c.DialWithin(ctx, "h1", "h3", 3*time.Second); err == nil {
			t.Error("h1 (site 1) connected to h3 behind site 2's firewall")
		}
		if err := c.DialWithin(ctx, "h4", "h3", time.Minute); err != nil {
			t.Errorf("within the firewalled site: %v", err)
		}
	})

	t.Run("nat", func(t *testing.T) {
		seen, err := c.SeenAs(ctx, "h5", "h1")
		if err != nil {
			t.Fatal(err)
		}
		if seen != sites[2].PublicAddr {
			t.Errorf("h5 behind NAT seen at %s, want the gateway's %s", seen, sites[2].PublicAddr)
		}
		if err := c.DialWithin(ctx, "h1", "h5", 3*time.Second); err == nil {
			t.Error("h1 connected to h5 behind NAT")
		}
		if err := c.DialWithin(ctx, "h6", "h5", time.Minute); err != nil {
			t.Errorf("within the NATed site: %v", err)
		}
	})

	t.Run("loss", func(t *testing.T) {
		for _, s := range []int{1, 2} {
			if err := c.SetWAN(ctx, s, gridDelay, 0.05); err != nil {
				t.Fatal(err)
			}
		}
		defer func() {
			for _, s := range []int{1, 2} {
				if err := c.SetWAN(ctx, s, gridDelay, 0); err != nil {
					t.Error(err)
				}
			}
		}()
		before, err := c.WANStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := c.MeasureTransfer(ctx, "h3", "h1", 2<<20)
		if err != nil {
			t.Fatal(err)
		}
		if !tr.Intact {
			t.Error("a transfer with 5% loss arrived corrupted")
		}
		after, err := c.WANStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if after.Total.Lost == before.Total.Lost {
			t.Error("loss 5%: the emulator dropped nothing")
		}
		t.Logf("loss 5%%: %d bytes in %v, %d packets dropped", tr.Bytes, tr.Elapsed, after.Total.Lost-before.Total.Lost)
	})

	t.Run("down", func(t *testing.T) { testWANDown(ctx, t, c) })

	if err := c.SetWAN(ctx, 4, 0, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("site 4 of 3: %v, want ErrInvalid", err)
	}
	closeLeavesNothing(t, c)
}

// testWANDown holds a connection from h3 (site 2) to h1 (site 1), takes site 1's link down,
// sends on the connection, sees a new connection fail and the packets dropped, brings the
// link up and sees the same connection deliver.
func testWANDown(ctx context.Context, t *testing.T, c *Cluster) {
	addr, stop, err := c.startSink(ctx, "h1")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	cmd, stderr, err := c.selfCommand(ctx, "h3", "wanprobe", "hold", addr)
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	defer stdin.Close()
	out := bufio.NewReader(stdout)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("hold: %q, %v: %s", line, err, stderr)
	}
	if err := c.WANDown(ctx, 1); err != nil {
		t.Fatal(err)
	}
	before, err := c.WANStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(stdin, "go\n"); err != nil { // an echo into the dead link
		t.Fatal(err)
	}
	if err := c.DialWithin(ctx, "h3", "h1", 2*time.Second); err == nil {
		t.Error("a connection opened across a link that is down")
	}
	for {
		st, err := c.WANStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Total.Down > before.Total.Down {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("no packet was dropped for the link down")
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := c.WANUp(ctx, 1); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(out)
	if err != nil || !strings.Contains(string(rest), `"echo"`) {
		t.Errorf("the held connection after the link came up: %q, %v: %s", rest, err, stderr)
	}
}

// wanPackets is the number of packets the emulator has passed between sites.
func wanPackets(t *testing.T, c *Cluster) uint64 {
	t.Helper()
	st, err := c.WANStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Total.Packets + st.Total.Lost + st.Total.Down + st.Total.Overflow
}

// TestGridInvalid: grid options that cannot work, and wide-area calls without sites.
func TestGridInvalid(t *testing.T) {
	ctx := context.Background()
	for _, opts := range [][]Option{
		{WithSites(0, 2), WithWAN(time.Millisecond, 0, 0)},
		{WithSites(65, 1)},
		{WithSites(2, 0)},
		{WithSites(2, 2), WithWAN(-time.Second, 0, 0)},
		{WithSites(2, 2), WithWAN(0, 10, 0)},
		{WithSites(2, 2), WithWAN(0, 0, 2)},
		{WithSites(2, 2), WithFirewall(3)},
		{WithSites(2, 2), WithNAT(0)},
		{WithFirewall(1)},
		{WithSites(2, 1), WithNAT(2), WithSlurm()},
	} {
		if _, err := Up(ctx, opts...); !errors.Is(err, ErrInvalid) {
			t.Errorf("Up: %v, want ErrInvalid", err)
		}
	}
	c := &Cluster{}
	if err := c.WANDown(ctx, 1); !errors.Is(err, ErrNoGrid) {
		t.Errorf("WANDown without sites: %v, want ErrNoGrid", err)
	}
	if _, err := ParseSites("2,x"); !errors.Is(err, ErrInvalid) {
		t.Errorf("ParseSites: %v", err)
	}
	if s, err := ParseSites("2, 4"); err != nil || len(s) != 2 || s[1] != 4 {
		t.Errorf("ParseSites(2, 4): %v %v", s, err)
	}
	for in, want := range map[string]float64{"0.1%": 0.001, "5%": 0.05, "0.5": 0.5, "0": 0} {
		if v, err := ParseLoss(in); err != nil || v < want*0.999999 || v > want*1.000001 {
			t.Errorf("ParseLoss(%q) = %v, %v; want %v", in, v, err, want)
		}
	}
	for _, in := range []string{"", "x", "101%", "-1", "2"} {
		if _, err := ParseLoss(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseLoss(%q): %v, want ErrInvalid", in, err)
		}
	}
}
