package main

// What the processes of a registry-join run use: CPU time and write system calls
// between two moments, and peak memory, read from /proc.

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// runProcs are the process ids of a run by kind.
type runProcs struct {
	fronts, etcd, members []int
}

// procUsage is what the run's processes had used at one moment.
type procUsage struct {
	frontCPU, etcdCPU, memberCPU []time.Duration
	frontWrites                  []int64
}

// usage reads what the processes have used so far.
func (p runProcs) usage() procUsage {
	u := procUsage{frontCPU: cpuTimes(p.fronts), etcdCPU: cpuTimes(p.etcd), memberCPU: cpuTimes(p.members)}
	for _, pid := range p.fronts {
		u.frontWrites = append(u.frontWrites, writeCalls(pid))
	}
	return u
}

// measured fills in res what the processes used between before and after, and their
// peak RSS.
func (p runProcs) measured(res *regjoinResult, before, after procUsage) {
	res.frontCPU = cpuUsed(before.frontCPU, after.frontCPU)
	res.etcdCPU = cpuUsed(before.etcdCPU, after.etcdCPU)
	res.memberCPU = cpuUsed(before.memberCPU, after.memberCPU)
	for i := range before.frontWrites {
		n := int64(-1)
		if before.frontWrites[i] >= 0 && after.frontWrites[i] >= 0 {
			n = after.frontWrites[i] - before.frontWrites[i]
		}
		res.frontWrites = append(res.frontWrites, n)
	}
	res.frontRSS, res.etcdRSS, res.memberRSS = peakRSSes(p.fronts), peakRSSes(p.etcd), peakRSSes(p.members)
}

// cpuTimes reads the CPU time each process has used so far.
func cpuTimes(pids []int) []time.Duration {
	out := make([]time.Duration, len(pids))
	for i, pid := range pids {
		out[i] = processCPUOf(pid)
	}
	return out
}

// cpuUsed is the CPU time used between two readings (-1 where one is missing).
func cpuUsed(before, after []time.Duration) []time.Duration {
	out := make([]time.Duration, len(before))
	for i := range before {
		out[i] = -1
		if before[i] >= 0 && after[i] >= 0 {
			out[i] = after[i] - before[i]
		}
	}
	return out
}

// peakRSSes reads the peak RSS of each process.
func peakRSSes(pids []int) []int64 {
	out := make([]int64, len(pids))
	for i, pid := range pids {
		out[i] = peakRSS(pid)
	}
	return out
}

// peakRSS returns the peak resident set size (VmHWM) of process pid in bytes, or -1
// when it cannot be read.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	v, err := parseStatusKB(b, "VmHWM")
	if err != nil {
		return -1
	}
	return v
}

// userHZ is the unit of the CPU times in /proc/PID/stat: USER_HZ, 100 on Linux.
const userHZ = 100

// processCPUOf returns the CPU time (user and system) process pid has used so far, or
// -1 when it cannot be read.
func processCPUOf(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// pid (comm) state ppid ...: utime and stime are fields 14 and 15; the command
	// may hold spaces but not ')'.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(utime+stime) * time.Second / userHZ
}

// writeCalls returns how many write system calls process pid has made so far (syscw
// of /proc/PID/io), or -1 when it cannot be read.
func writeCalls(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "syscw:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}
