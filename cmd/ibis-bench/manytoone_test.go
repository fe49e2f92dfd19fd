package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		n, p int
		want []int
	}{
		{1000, 4, []int{250, 250, 250, 250}},
		{10, 4, []int{3, 3, 2, 2}},
		{3, 3, []int{1, 1, 1}},
	} {
		if got := spread(tc.n, tc.p); !slices.Equal(got, tc.want) {
			t.Errorf("spread(%d, %d) = %v, want %v", tc.n, tc.p, got, tc.want)
		}
	}
}

func TestManyToOneFlags(t *testing.T) {
	ok := m2oFlags{conns: 1000, senders: 4, size: 64, duration: time.Second}
	if err := ok.validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []m2oFlags{
		{conns: 0, senders: 1, size: 64, duration: time.Second},
		{conns: 4, senders: 5, size: 64, duration: time.Second},
		{conns: 4, senders: 0, size: 64, duration: time.Second},
		{conns: 4, senders: 1, size: -1, duration: time.Second},
		{conns: 4, senders: 1, size: 64},
	} {
		if err := bad.validate(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func TestQuantiles(t *testing.T) {
	lo, med, hi := quantiles([]int64{5, 1, 9, 3, 7})
	if lo != 1 || med != 5 || hi != 9 {
		t.Fatalf("quantiles %d %d %d", lo, med, hi)
	}
	if lo, med, hi := quantiles(nil); lo != 0 || med != 0 || hi != 0 {
		t.Fatal("quantiles of nothing")
	}
}

// TestManyToOneReport: the per-connection rows are the growth over the baseline
// divided by the connections.
func TestManyToOneReport(t *testing.T) {
	base := memSnap{Goroutines: 50, RSS: 10 << 20, HWM: 10 << 20, HeapInuse: 2 << 20, StackInuse: 1 << 20}
	conn := memSnap{Goroutines: 1050, RSS: 10<<20 + 1000*12<<10, HWM: 10<<20 + 1000*13<<10, HeapInuse: 2<<20 + 1000*11<<10, StackInuse: 1<<20 + 1000*4<<10}
	r := &m2oResult{conns: 1000, procs: 4, size: 64, rate: 50000, overall: 80000, window: time.Second,
		counted: 50000, received: 90000, sent: 90000, perConn: []int64{0, 50, 100},
		before: base, base: base, connected: conn, load: conn, traffic: conn, fdLimit: 20000, connectTime: time.Second}
	rep := m2oReport("test", m2oType, r)
	if len(rep.Tables) != 2 {
		t.Fatalf("%d tables", len(rep.Tables))
	}
	speed := rep.Tables[0].Rows[0]
	if speed[3].(float64) != 50000 || speed[6].(string) != "0 / 50 / 100" {
		t.Fatalf("speed row %v", speed)
	}
	if c := rep.Tables[0].Columns; c[3] != "messages/s while all send" || c[7] != "overall messages/s incl. drain" {
		t.Errorf("rate columns %q and %q do not say what they count", c[3], c[7])
	}
	if n := rep.Tables[0].Notes; !slices.Contains(n, "the two rates differ by 1.6x: the window held 50000 of the 90000 messages (56%); the rest came in the warm-up and in the drain after the senders stopped, when the receiver no longer shares the cores with them. Compare receivers by messages/s while all send, or by CPU per message") {
		t.Errorf("no note on the difference of the rates:\n%s", strings.Join(n, "\n"))
	}
	idle := rep.Tables[1].Rows[5]
	if idle[0] != "per connection, idle" || idle[1].(float64) != 1 || idle[2].(float64) != 12 || idle[3].(float64) != 13 ||
		idle[4].(float64) != 11 || idle[5].(float64) != 4 {
		t.Fatalf("per-connection row %v", idle)
	}
	pc := rep.Values["per_connection"].(map[string]any)["idle"].(map[string]any)
	if pc["goroutines"].(float64) != 1 || pc["rss_kib"].(float64) != 12 {
		t.Fatalf("JSON per connection %v", pc)
	}
}

// TestManyToOneRun runs the experiment end to end with a few connections: tcp, and
// nio with a nonblocking receive port. With nio no goroutine serves a connection.
func TestManyToOneRun(t *testing.T) {
	const conns = 12
	perConnGoroutines := map[string]float64{}
	for _, impl := range [][]string{{"-impl", "tcp"}, {"-impl", "nio", "-nio-receive", "nonblocking"}} {
		args := append([]string{"manytoone", "-conns", "12", "-senders", "2", "-duration", "100ms", "-size", "16"}, impl...)
		out, rep := mustRun(t, args...)
		for _, want := range []string{"messages/s", "per connection, idle", "VmRSS", "12 connections open, under load"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q:\n%s", impl, want, out)
			}
		}
		values := rep["values"].(map[string]any)
		if values["implementation"] != impl[1] || values["connections"].(float64) != conns {
			t.Errorf("%v: values %v", impl, values)
		}
		if r, ok := values["messages_per_second"].(float64); !ok || r <= 0 {
			t.Errorf("%v: rate %v", impl, values["messages_per_second"])
		}
		idle := values["per_connection"].(map[string]any)["idle"].(map[string]any)
		perConnGoroutines[impl[1]] = idle["goroutines"].(float64)
	}
	if perConnGoroutines["tcp"] < 1 || perConnGoroutines["nio"] >= 0.5 {
		t.Errorf("goroutines per connection: %v; want a reader each for tcp, none for nio", perConnGoroutines)
	}
}
