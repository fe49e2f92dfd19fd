package dc

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// Stats counts what one process did in a run.
type Stats struct {
	Process string `msgpack:"process" json:"process"` // the member's ID
	// Rank is the process's launch rank (ipl.LaunchRank: ibis-run, -np, srun, mpirun),
	// by which the launcher's messages name it; -1 when no launcher ranked it.
	Rank int    `msgpack:"rank" json:"rank"`
	Site string `msgpack:"site" json:"site"`
	// Spawned jobs, and Executed: jobs this process ran (its own and stolen ones).
	Spawned  int64 `msgpack:"spawned" json:"spawned"`
	Executed int64 `msgpack:"executed" json:"executed"`
	// StealAttempts are the steal requests this process sent, Steals the ones that
	// brought a job; WideAreaAttempts the requests to another site.
	StealAttempts    int64 `msgpack:"steal_attempts" json:"steal_attempts"`
	Steals           int64 `msgpack:"steals" json:"steals"`
	WideAreaAttempts int64 `msgpack:"wide_area_attempts" json:"wide_area_attempts"`
	// Given: jobs other processes stole from this one. Forwarded: steal requests it
	// passed on (TRS). Requeued: jobs it ran again because their thief died.
	Given     int64 `msgpack:"given" json:"given"`
	Forwarded int64 `msgpack:"forwarded" json:"forwarded"`
	Requeued  int64 `msgpack:"requeued" json:"requeued"`
	// WideAreaMessages: every message this process sent to another site.
	WideAreaMessages int64 `msgpack:"wide_area_messages" json:"wide_area_messages"`
	// Idle is the time the worker spent looking for work.
	Idle time.Duration `msgpack:"idle_ns" json:"idle_ns"`
	// Connections this process's send ports made, and of them those that took another
	// route than a direct dial (ipl.PortStats): on a grid with firewalls and NAT, where
	// a peer could be reached only by reverse set-up or through a relay hub.
	Connections         int64 `msgpack:"connections" json:"connections"`
	ConnectionsReversed int64 `msgpack:"connections_reversed" json:"connections_reversed"`
	ConnectionsRelayed  int64 `msgpack:"connections_relayed" json:"connections_relayed"`
}

// add sums s into t.
func (t *Stats) add(s Stats) {
	t.Spawned += s.Spawned
	t.Executed += s.Executed
	t.StealAttempts += s.StealAttempts
	t.Steals += s.Steals
	t.WideAreaAttempts += s.WideAreaAttempts
	t.Given += s.Given
	t.Forwarded += s.Forwarded
	t.Requeued += s.Requeued
	t.WideAreaMessages += s.WideAreaMessages
	t.Idle += s.Idle
	t.Connections += s.Connections
	t.ConnectionsReversed += s.ConnectionsReversed
	t.ConnectionsRelayed += s.ConnectionsRelayed
}

// AttemptsPerSteal is steal requests per successful steal (0 when nothing was stolen).
func (t Stats) AttemptsPerSteal() float64 {
	if t.Steals == 0 {
		return 0
	}
	return float64(t.StealAttempts) / float64(t.Steals)
}

// Report is the statistics of a run: one entry per process that answered the root
// (every process, unless some died), in member order, and their sum.
type Report struct {
	Algorithm string        `json:"algorithm"`
	Processes []Stats       `json:"processes"`
	Total     Stats         `json:"total"`
	Elapsed   time.Duration `json:"elapsed_ns"`
}

func newReport(algo Algorithm, elapsed time.Duration, all []Stats) Report {
	slices.SortFunc(all, func(a, b Stats) int { return compareIDs(a.Process, b.Process) })
	r := Report{Algorithm: algo.String(), Processes: all, Elapsed: elapsed}
	for _, s := range all {
		r.Total.add(s)
	}
	r.Total.Process, r.Total.Rank = "total", -1
	return r
}

// compareIDs orders member IDs (join numbers) numerically.
func compareIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Print writes the report as a table.
func (r Report) Print(w io.Writer) {
	fmt.Fprintf(w, "%-8s %-5s %-8s %10s %10s %9s %8s %8s %9s %8s %9s %10s\n",
		"process", "rank", "site", "spawned", "executed", "attempts", "steals", "att/st", "forwarded", "given", "wide-area", "idle")
	for _, s := range append(slices.Clone(r.Processes), r.Total) {
		rank := "-"
		if s.Rank >= 0 && s.Process != r.Total.Process {
			rank = fmt.Sprint(s.Rank)
		}
		fmt.Fprintf(w, "%-8s %-5s %-8s %10d %10d %9d %8d %8.2f %9d %8d %9d %10s\n", s.Process, rank, s.Site, s.Spawned, s.Executed,
			s.StealAttempts, s.Steals, s.AttemptsPerSteal(), s.Forwarded, s.Given, s.WideAreaMessages, s.Idle.Round(time.Microsecond))
	}
	t := r.Total
	fmt.Fprintf(w, "connections %d: direct %d, reversed %d, relayed %d\n", t.Connections,
		t.Connections-t.ConnectionsReversed-t.ConnectionsRelayed, t.ConnectionsReversed, t.ConnectionsRelayed)
}
