package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// receiverResult returns the one JSON result line the pool printed, failing the test
// unless every process succeeded and exactly one (the receiver) printed a result.
func receiverResult(t *testing.T, outs []procOut) result {
	t.Helper()
	var lines []string
	for _, o := range outs {
		if o.code != 0 {
			t.Fatalf("a process failed\n%s", describe(outs))
		}
		for _, l := range strings.Split(o.stdout, "\n") {
			if strings.HasPrefix(l, "{") {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%d result lines, want 1\n%s", len(lines), describe(outs))
	}
	var r result
	if err := json.Unmarshal([]byte(lines[0]), &r); err != nil {
		t.Fatalf("result %q: %v", lines[0], err)
	}
	return r
}

// TestLoad runs a small load end to end on tcp and on nio's two receive flavours that a
// many-to-one port takes: two sender processes of two ports each, a consumer that
// pauses, every message checked.
func TestLoad(t *testing.T) {
	for _, tc := range []struct{ name, impl, receive string }{
		{"tcp", "tcp", ""},
		{"nio-nonblocking", "nio", "nonblocking"},
		{"nio-thread", "nio", "thread"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"-ports", "2", "-messages", "300", "-values", "8",
				"-consume-delay", "1ms", "-consume-every", "100", "-json", "-stall", "30s"}
			if tc.receive != "" {
				args = append(args, "-property", "nio.receive="+tc.receive)
			}
			r := receiverResult(t, runPool(t, 3, tc.impl, args...))
			if !r.OK || r.Expected != 1200 || r.Received != 1200 || r.Lost != 0 || r.OutOfOrder != 0 || r.Corrupt != 0 || r.Duplicates != 0 {
				t.Fatalf("result %+v", r)
			}
			if r.Impl != tc.impl || (tc.receive != "" && r.NioReceive != tc.receive) {
				t.Errorf("ran %s nio.receive=%q, want %s %q", r.Impl, r.NioReceive, tc.impl, tc.receive)
			}
			if r.ReceiverPeakRSS <= 0 || len(r.SenderPeakRSS) != 2 || r.SenderPeakRSS["rank 0"]+r.SenderPeakRSS["rank 1"]+r.SenderPeakRSS["rank 2"] <= 0 {
				t.Errorf("peak RSS: receiver %d, senders %v", r.ReceiverPeakRSS, r.SenderPeakRSS)
			}
			if r.ConsumeSeconds <= 0 || r.Seconds <= 0 || r.MsgsPerSec <= 0 {
				t.Errorf("times %+v", r)
			}
		})
	}
}

// TestLoadOneByOne sends large messages written value by value.
func TestLoadOneByOne(t *testing.T) {
	r := receiverResult(t, runPool(t, 3, "tcp", "-ports", "3", "-messages", "10", "-values", "7000", "-one-by-one", "-json"))
	if !r.OK || r.Received != 60 || !r.OneByOne || r.Bytes < 60*7000*8 {
		t.Fatalf("result %+v", r)
	}
}

// TestPoolOfOne: a single process has nobody to receive from and says so.
func TestPoolOfOne(t *testing.T) {
	outs := runPool(t, 1, "tcp", "-messages", "1")
	if outs[0].code != exitUsage || !strings.Contains(outs[0].stderr, "at least two processes") {
		t.Fatalf("exit %d, stderr %q", outs[0].code, outs[0].stderr)
	}
}
