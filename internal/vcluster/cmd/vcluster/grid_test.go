package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/internal/vcluster"
)

// TestGridCommands builds a grid of two sites (site 2 firewalled), changes and reads its
// wide-area link, measures across it and removes it.
func TestGridCommands(t *testing.T) {
	if err := vcluster.Unavailable(vcluster.NeedTUN, vcluster.NeedIPTables); err != nil {
		if os.Getenv("IBIS_VCLUSTER_REQUIRE") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	id, persist = "ivc-cligrid"+strconv.Itoa(os.Getpid()), false
	defer func() { _ = vcluster.Remove(id) }()
	do := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("%q: exit %d\n%s", args, code, errb.String())
		}
		return out.String()
	}
	out := do("up", "-sites", "2", "-hosts-per-site", "1", "-wan-delay", "2ms", "-wan-loss", "0.1%", "-firewall", "2")
	if !strings.Contains(out, "h2   10.203.2.1") || !strings.Contains(out, "site s2: 10.203.2.0/24, hosts h2") ||
		!strings.Contains(out, "firewall") || !strings.Contains(out, "wide-area link of s2: delay 2ms, loss 0.1%, down false") {
		t.Errorf("up printed:\n%s", out)
	}
	do("wan", "set", "1", "3ms", "0")
	if out := do("wan", "stats"); !strings.Contains(out, `"delay": 3000000`) || !strings.Contains(out, `"loss": 0.001`) {
		t.Errorf("wan stats after set:\n%s", out)
	}
	do("wan", "down", "2")
	if out := do("wan", "stats"); !strings.Contains(out, `"down": true`) {
		t.Errorf("wan stats after down:\n%s", out)
	}
	do("wan", "up", "2")
	out = do("wancheck", "-n", "3", "-bytes", "100000", "h2", "h1")
	if !strings.Contains(out, "h2 -> h1: round trip") || !strings.Contains(out, "intact true") {
		t.Errorf("wancheck printed:\n%s", out)
	}
	var sink, errb bytes.Buffer
	if code := run([]string{"wan", "down", "3"}, &sink, &errb); code == 0 {
		t.Error("wan down 3 of 2 sites: exit 0")
	}
	do("down")
}
