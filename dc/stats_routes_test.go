package dc_test

import (
	"strings"
	"testing"

	"github.com/ibisgo/ibis/dc"
)

// TestReportConnections checks that the report sums the connections the processes' send
// ports made: at least the root's end to every other process and their statistics back,
// at most one per ordered pair; all direct on loopback, and the stats block says so.
func TestReportConnections(t *testing.T) {
	const p = 3
	rts := localPool(t, "tcp", p, dc.WithAlgorithm(dc.RS))
	runAll(t, rts, fibKind, 22)
	var rep dc.Report
	for _, rt := range rts {
		if rt.Root() {
			rep = rt.Report()
		}
	}
	if len(rep.Processes) != p {
		t.Fatalf("the root's report has %d processes, want %d", len(rep.Processes), p)
	}
	tot := rep.Total
	if tot.Connections < 2*(p-1) || tot.Connections > p*(p-1) {
		t.Errorf("%d connections in all, want %d to %d", tot.Connections, 2*(p-1), p*(p-1))
	}
	var sum int64
	for _, s := range rep.Processes {
		sum += s.Connections
	}
	if sum != tot.Connections {
		t.Errorf("the processes made %d connections, the total says %d", sum, tot.Connections)
	}
	if tot.ConnectionsReversed != 0 || tot.ConnectionsRelayed != 0 {
		t.Errorf("on loopback %d connections reversed and %d relayed, want none", tot.ConnectionsReversed, tot.ConnectionsRelayed)
	}
	text := reportText(rep)
	want := "reversed 0, relayed 0"
	if !strings.Contains(text, want) || !strings.Contains(text, "connections ") {
		t.Errorf("the stats block has no line of connections by route (%q):\n%s", want, text)
	}
}
