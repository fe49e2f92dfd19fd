package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// memSnap is what one process holds at a moment: its goroutines and memory. The
// many-to-one experiment takes snapshots in the receiver process and reports the
// difference to a baseline taken in the same process.
type memSnap struct {
	Goroutines int   // runtime.NumGoroutine
	RSS        int64 // resident set size in bytes (VmRSS of /proc/self/status; -1 if unknown)
	HWM        int64 // peak resident set size so far (VmHWM; -1 if unknown)
	HeapInuse  int64 // bytes in in-use heap spans (runtime.MemStats.HeapInuse)
	StackInuse int64 // bytes of goroutine stacks (runtime.MemStats.StackInuse)
}

// takeSnapshot collects garbage, returns freed memory to the OS (so that RSS counts
// what is live, not what the collector has yet to give back) and then reads the
// process's figures.
func takeSnapshot() memSnap {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := memSnap{Goroutines: runtime.NumGoroutine(), RSS: -1, HWM: -1,
		HeapInuse: int64(ms.HeapInuse), StackInuse: int64(ms.StackInuse)}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		if v, err := parseStatusKB(b, "VmRSS"); err == nil {
			s.RSS = v
		}
		if v, err := parseStatusKB(b, "VmHWM"); err == nil {
			s.HWM = v
		}
	}
	return s
}

// parseStatusKB reads a "Name:  N kB" line (VmRSS, VmHWM) of a /proc/PID/status
// file, in bytes.
func parseStatusKB(status []byte, name string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), name+":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("%s line %q: want a number of kB", name, sc.Text())
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 {
			return 0, fmt.Errorf("%s line %q: want a number of kB", name, sc.Text())
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no %s line", name)
}

// memPer is the growth of a process's figures per connection.
type memPer struct {
	Goroutines            float64
	RSS, HWM, Heap, Stack float64 // KiB; RSS and HWM are NaN when unknown
}

// perConn is the growth from base to s divided over n connections; the peak (HWM)
// is counted from the baseline's resident size.
func perConn(s, base memSnap, n int) memPer {
	k := float64(n)
	p := memPer{Goroutines: float64(s.Goroutines-base.Goroutines) / k, RSS: math.NaN(), HWM: math.NaN(),
		Heap: kib(s.HeapInuse-base.HeapInuse) / k, Stack: kib(s.StackInuse-base.StackInuse) / k}
	if s.RSS >= 0 && base.RSS >= 0 {
		p.RSS = kib(s.RSS-base.RSS) / k
	}
	if s.HWM >= 0 && base.RSS >= 0 {
		p.HWM = kib(s.HWM-base.RSS) / k
	}
	return p
}

// kib turns bytes into KiB for the tables.
func kib(b int64) float64 { return float64(b) / 1024 }
