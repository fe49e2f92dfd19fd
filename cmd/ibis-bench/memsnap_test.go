package main

import (
	"math"
	"testing"
)

func TestParseStatusKB(t *testing.T) {
	status := []byte("Name:\tibis-bench\nVmPeak:\t  123456 kB\nVmHWM:\t   20480 kB\nVmRSS:\t   10240 kB\nThreads:\t7\n")
	if v, err := parseStatusKB(status, "VmRSS"); err != nil || v != 10240<<10 {
		t.Fatalf("VmRSS = %d, %v; want %d", v, err, 10240<<10)
	}
	if v, err := parseStatusKB(status, "VmHWM"); err != nil || v != 20480<<10 {
		t.Fatalf("VmHWM = %d, %v", v, err)
	}
	for _, bad := range []string{"VmRSS:\t12 MB\n", "VmRSS:\tx kB\n", "VmRSS:\t-1 kB\n", "Name:\tx\n"} {
		if _, err := parseStatusKB([]byte(bad), "VmRSS"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestPerConn(t *testing.T) {
	base := memSnap{Goroutines: 10, RSS: 1 << 20, HWM: 1 << 20, HeapInuse: 1 << 19, StackInuse: 1 << 15}
	s := memSnap{Goroutines: 110, RSS: 1<<20 + 100*4096, HWM: 1<<20 + 100*8192, HeapInuse: 1<<19 + 100*2048, StackInuse: 1<<15 + 100*1024}
	p := perConn(s, base, 100)
	if p.Goroutines != 1 || p.RSS != 4 || p.HWM != 8 || p.Heap != 2 || p.Stack != 1 {
		t.Fatalf("per connection %+v, want 1 goroutine, 4 KiB RSS, 8 KiB peak, 2 KiB heap, 1 KiB stack", p)
	}
	s.RSS, s.HWM = -1, -1
	if p := perConn(s, base, 100); !math.IsNaN(p.RSS) || !math.IsNaN(p.HWM) {
		t.Fatalf("unknown RSS gave %+v", p)
	}
}

func TestTakeSnapshot(t *testing.T) {
	s := takeSnapshot()
	if s.Goroutines < 1 || s.RSS <= 0 || s.HWM < s.RSS || s.HeapInuse <= 0 || s.StackInuse <= 0 {
		t.Fatalf("snapshot %+v", s)
	}
}
