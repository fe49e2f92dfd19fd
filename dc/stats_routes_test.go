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

// The report's table gives each process's launch rank next to its member ID, as the
// launchers' messages name processes by rank ("-" where no launcher ranked it).
func TestReportPrintsRanks(t *testing.T) {
	rep := dc.Report{Processes: []dc.Stats{{Process: "0", Rank: 2, Site: "a"}, {Process: "1", Rank: -1, Site: "b"}}}
	var b strings.Builder
	rep.Print(&b)
	lines := strings.Split(b.String(), "\n")
	if len(lines) < 3 || !strings.Contains(lines[0], "rank") ||
		strings.Fields(lines[1])[1] != "2" || strings.Fields(lines[2])[1] != "-" {
		t.Errorf("the table:\n%s\nwant a rank column: 2 for process 0, - for process 1", b.String())
	}
}
