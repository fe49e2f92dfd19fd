package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// requireEtcdEnv makes a missing etcd binary fail the etcd tests instead of skipping
// them (CI sets it, as for internal/etcdtest).
const requireEtcdEnv = "IBIS_REQUIRE_ETCD"

// needEtcd skips the test when no etcd server binary is installed.
func needEtcd(t *testing.T) {
	t.Helper()
	if _, err := findEtcd(""); err != nil {
		if os.Getenv(requireEtcdEnv) == "1" {
			t.Fatalf("%v, and %s=1 requires it", err, requireEtcdEnv)
		}
		t.Skip(err)
	}
}

// checkRegjoinRun checks the JSON of a registry-join run of n members.
func checkRegjoinRun(t *testing.T, rep map[string]any, n, fronts int, etcd bool) {
	t.Helper()
	values := rep["values"].(map[string]any)
	runs := values["runs"].([]any)
	if len(runs) != 1 {
		t.Fatalf("%d runs in the JSON, want 1", len(runs))
	}
	run := runs[0].(map[string]any)
	all, median := run["all_seen_seconds"].(float64), run["median_seen_seconds"].(float64)
	if !(all > 0 && median > 0 && median <= all) {
		t.Errorf("all seen %v s, median seen %v s: want 0 < median <= all", all, median)
	}
	if jm, jx := run["join_median_seconds"].(float64), run["join_max_seconds"].(float64); !(jm > 0 && jm <= jx && jx <= all) {
		t.Errorf("join median %v s, max %v s, all seen %v s: want 0 < median <= max <= all", jm, jx, all)
	}
	per := run["members_per_front"].([]any)
	sum := 0
	for _, x := range per {
		sum += int(x.(float64))
	}
	if len(per) != fronts || sum != n {
		t.Errorf("members per front end %v: want %d front ends, %d members in all", per, fronts, n)
	}
	for _, key := range []string{"front_peak_rss", "members_peak_rss"} {
		for _, x := range run[key].([]any) {
			if x.(float64) <= 0 {
				t.Errorf("%s %v: want positive sizes", key, run[key])
			}
		}
	}
	for _, key := range []string{"front_cpu_seconds", "members_cpu_seconds"} {
		if cpu := run[key].([]any); len(cpu) == 0 || cpu[0].(float64) < 0 {
			t.Errorf("%s %v: want times read from /proc", key, run[key])
		}
	}
	for _, w := range run["front_write_calls"].([]any) {
		if w.(float64) <= 0 {
			t.Errorf("front end write calls %v: a front end that sent events wrote", run["front_write_calls"])
		}
	}
	if rss, _ := run["etcd_peak_rss"].([]any); etcd != (len(rss) > 0) {
		t.Errorf("etcd peak RSS %v with etcd %v", run["etcd_peak_rss"], etcd)
	}
}

// children returns the processes whose parent is this process: none may be left
// after a run.
func children(t *testing.T) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(os.Getpid())
	var out []string
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: the command may hold spaces, not ')'.
		i := bytes.LastIndexByte(b, ')')
		if f := strings.Fields(string(b[i+1:])); i >= 0 && len(f) > 1 && f[1] == me {
			out = append(out, string(b[:i+1]))
		}
	}
	return out
}

func TestRegistryJoinMemory(t *testing.T) {
	out, rep := mustRun(t, "registry-join", "-members", "20", "-procs", "2")
	if !strings.Contains(out, "20 members in 2 processes") || !strings.Contains(out, "store memory") {
		t.Errorf("output:\n%s", out)
	}
	checkRegjoinRun(t, rep, 20, 1, false)
	if left := children(t); len(left) > 0 {
		t.Errorf("processes left after the run: %v", left)
	}
}

func TestRegistryJoinEtcd(t *testing.T) {
	needEtcd(t)
	_, rep := mustRun(t, "registry-join", "-members", "20", "-procs", "2", "-store", "etcd")
	checkRegjoinRun(t, rep, 20, 1, true)
	if left := children(t); len(left) > 0 {
		t.Errorf("processes left after the run: %v", left)
	}
}

func TestRegistryJoinEtcdTwoFrontEnds(t *testing.T) {
	needEtcd(t)
	out, rep := mustRun(t, "registry-join", "-members", "20", "-procs", "3", "-store", "etcd", "-front-ends", "2")
	if !strings.Contains(out, "2 front end(s), store etcd, 1 node") {
		t.Errorf("output:\n%s", out)
	}
	checkRegjoinRun(t, rep, 20, 2, true)
}

// A run that fails (here, as a rule: its time is up before the pool could have
// joined) ends every process it started.
func TestRegistryJoinFailureEndsProcesses(t *testing.T) {
	code, out, errs := runCmd(t, "registry-join", "-members", "200", "-procs", "2", "-timeout", "100ms", "-q")
	if code == 0 {
		t.Logf("200 members joined within 100ms:\n%s", out)
	} else {
		t.Logf("exit %d: %s", code, head(errs, 3))
	}
	if left := children(t); len(left) > 0 {
		t.Errorf("processes left after the run: %v", left)
	}
}

func TestRegistryJoinUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-front-ends", "2"}, // two front ends need etcd
		{"-members", "2", "-procs", "3"},
		{"-store", "zookeeper://h:1"},
		{"-store", "etcd://"},
		{"-etcd-nodes", "0"},
	} {
		// A subcommand's own flags are checked when it runs, with the same exit status 2.
		if code, _, errs := runCmd(t, append([]string{"registry-join"}, args...)...); code != 2 || !strings.Contains(errs, "usage: -") {
			t.Errorf("%v: exit %d, want 2 and a usage error; stderr: %s", args, code, errs)
		}
	}
}
