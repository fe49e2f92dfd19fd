package main

import (
	"strings"
	"testing"
)

func TestRaiseFileLimit(t *testing.T) {
	lim, err := raiseFileLimit(16)
	if err != nil || lim < 16 {
		t.Fatalf("raiseFileLimit(16) = %d, %v", lim, err)
	}
	if _, err := raiseFileLimit(1 << 62); err == nil || !strings.Contains(err.Error(), "RLIMIT_NOFILE") {
		t.Fatalf("an impossible limit: %v", err)
	}
}

func TestProcessCPU(t *testing.T) {
	before := processCPU()
	x := 0
	for i := range 20_000_000 {
		x += i % 7
	}
	if after := processCPU(); after <= 0 || after < before || x == 0 {
		t.Fatalf("CPU time %v then %v", before, after)
	}
}
