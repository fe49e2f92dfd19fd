package main

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestTrackerClean(t *testing.T) {
	tr := newTracker([]int32{1, 2}, 2, 3)
	for seq := range int64(3) {
		for _, k := range []streamKey{{1, 0}, {1, 1}, {2, 0}, {2, 1}} {
			tr.data(k, seq, true)
		}
	}
	for _, k := range []streamKey{{1, 0}, {1, 1}, {2, 0}} {
		if err := tr.end(k, endInfo{sent: 3, rank: k.sender, peakRSS: 10 << 20}); err != nil {
			t.Fatal(err)
		}
	}
	if tr.done() || tr.ok() {
		t.Fatal("done before the last end")
	}
	if m := tr.missing(); !slices.Equal(m, []string{"sender 2 port 1: no end, highest message 2 of 3"}) {
		t.Fatalf("missing %q", m)
	}
	if err := tr.end(streamKey{2, 1}, endInfo{sent: 3, rank: 2, peakRSS: 20 << 20}); err != nil {
		t.Fatal(err)
	}
	if !tr.done() || !tr.ok() || tr.lost() != 0 || tr.expected() != 12 {
		t.Fatalf("tracker %+v", tr)
	}
	if p := tr.senderPeaks(); p["rank 1"] != 10<<20 || p["rank 2"] != 20<<20 || len(p) != 2 {
		t.Fatalf("peaks %v", p)
	}
}

func TestTrackerFaults(t *testing.T) {
	tr := newTracker([]int32{5}, 1, 6)
	k := streamKey{5, 0}
	tr.data(k, 0, true)
	tr.data(k, 2, true)
	tr.data(k, 1, true)  // after a later one
	tr.data(k, 2, true)  // again
	tr.data(k, 3, false) // damaged
	tr.data(k, 9, true)  // out of range
	tr.data(streamKey{6, 0}, 0, true)
	tr.data(streamKey{5, 1}, 0, true)
	if err := tr.end(k, endInfo{sent: 5}); err != nil {
		t.Fatal(err)
	}
	if err := tr.end(k, endInfo{sent: 5}); err == nil {
		t.Error("second end accepted")
	}
	tr.data(k, 4, true) // after the end
	if tr.ok() || tr.reordered != 1 || tr.duplicates != 2 || tr.corrupt != 5 || tr.distinct != 3 || tr.lost() != 3 || tr.received != 9 {
		t.Fatalf("tracker %+v, lost %d", tr, tr.lost())
	}
	if s := tr.shortEnds(); !slices.Equal(s, []string{"sender 5 port 0 sent 5 of 6"}) {
		t.Fatalf("short ends %q", s)
	}
}

func TestSettings(t *testing.T) {
	for _, tc := range []struct {
		args []string
		bad  string
	}{
		{nil, ""},
		{[]string{"-ports", "0"}, "-ports"},
		{[]string{"-values", "-1"}, "-values"},
		{[]string{"-consume-every", "0"}, "-consume-every"},
		{[]string{"-consume-delay", "-1s"}, "-consume-delay"},
		{[]string{"-stall", "0s"}, "-stall"},
	} {
		fs := flag.NewFlagSet("ibis-load", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		s := newSettings(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := s.validate()
		if (err == nil) != (tc.bad == "") || (err != nil && !strings.Contains(err.Error(), tc.bad)) {
			t.Errorf("%v: %v", tc.args, err)
		}
	}
}

func TestStatusKB(t *testing.T) {
	status := []byte("Name:\tx\nVmPeak:\t  100 kB\nVmHWM:\t    2048 kB\nVmRSS:\t 1024 kB\n")
	if got := statusKB(status, "VmHWM"); got != 2048<<10 {
		t.Fatalf("VmHWM %d", got)
	}
	if got := statusKB([]byte("VmHWM: lots\n"), "VmHWM"); got != -1 {
		t.Fatalf("bad line gave %d", got)
	}
	if peakRSS() <= 0 {
		t.Skip("no /proc/self/status here")
	}
}
