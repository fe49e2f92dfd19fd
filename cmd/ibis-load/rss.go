package main

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// peakRSS returns this process's peak resident set size in bytes (VmHWM of
// /proc/self/status), or -1 where that is not known.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	return statusKB(b, "VmHWM")
}

// statusKB reads a "Name:  N kB" line of a /proc/PID/status file, in bytes; -1 when
// there is no such line or it does not parse.
func statusKB(status []byte, name string) int64 {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), name+":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return -1
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 {
			return -1
		}
		return kb << 10
	}
	return -1
}
