package vcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
)

// termGrace is how long a process gets between SIGTERM and SIGKILL in a teardown.
const termGrace = 5 * time.Second

// youngState is how long a state directory without state.json is taken for one being made.
const youngState = time.Minute

func nopLogger() *zap.Logger { return zap.NewNop() }

// Sweep removes the clusters whose owner is gone without Close (killed with SIGKILL, say),
// and namespaces named ivc-* with no cluster at all. Clusters handed over with Persist are
// left for their Close. Up calls it; it is safe to call while other clusters are used.
func Sweep(ctx context.Context, log *zap.Logger) error {
	if log == nil {
		log = nopLogger()
	}
	if err := os.MkdirAll(StateRoot, 0o711); err != nil {
		return fmt.Errorf("vcluster: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(StateRoot, ".sweep.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("vcluster: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("vcluster: locking %s: %w", lock.Name(), err)
	}
	ids := map[string]bool{}
	entries, err := os.ReadDir(StateRoot)
	if err != nil {
		return fmt.Errorf("vcluster: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "ivc-") {
			ids[e.Name()] = true
		}
	}
	for _, ns := range namespaces("ivc-") {
		if i := strings.LastIndexByte(ns, '-'); i > len("ivc") {
			ids[ns[:i]] = true // ID-sw or ID-hN
		}
	}
	var errs []error
	for id := range ids {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !stale(id) {
			continue
		}
		log.Info("vcluster: sweeping a stale cluster", zap.String("id", id))
		errs = append(errs, teardown(id))
	}
	return errors.Join(errs...)
}

// stale reports whether cluster id has no live owner.
func stale(id string) bool {
	st, err := loadState(id)
	if err == nil {
		return !st.Persistent && !st.Owner.alive()
	}
	fi, serr := os.Stat(filepath.Join(StateRoot, id))
	if serr != nil {
		return true // namespaces without a state directory
	}
	return time.Since(fi.ModTime()) > youngState // being made, or left half-made long ago
}

// teardown stops every process of cluster id, then removes its namespaces, its
// /etc/netns entries and its state directory. What is already gone is no error.
func teardown(id string) error {
	dir := filepath.Join(StateRoot, id)
	var errs []error
	// The cluster's daemons name its directory on their command line; they get SIGTERM
	// first, to end their work, then everything left on the hosts gets SIGKILL.
	pids := processesNaming(dir + "/")
	signalAll(pids, syscall.SIGTERM)
	waitGone(pids, termGrace)
	nss := namespaces(id + "-")
	for _, ns := range nss {
		pids = append(pids, processesIn(ns)...)
	}
	pids = append(pids, processesNaming(dir+"/")...)
	signalAll(pids, syscall.SIGKILL)
	waitGone(pids, termGrace)
	for _, ns := range nss {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := exec.CommandContext(ctx, "ip", "netns", "delete", ns).CombinedOutput()
		cancel()
		if err != nil && !strings.Contains(string(out), "No such file") {
			errs = append(errs, fmt.Errorf("vcluster: ip netns delete %s: %w: %s", ns, err, bytes.TrimSpace(out)))
		}
	}
	if matches, err := filepath.Glob(filepath.Join(etcNetns, id+"-*")); err == nil {
		for _, m := range matches {
			errs = append(errs, os.RemoveAll(m))
		}
	}
	errs = append(errs, os.RemoveAll(dir))
	return errors.Join(errs...)
}

// namespaces lists the named network namespaces that start with prefix.
func namespaces(prefix string) []string {
	entries, err := os.ReadDir("/run/netns")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// processesIn lists the processes in network namespace ns (`ip netns pids`).
func processesIn(ns string) []int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", "netns", "pids", ns).Output()
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// processesNaming lists the processes whose command line contains s.
func processesNaming(s string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func signalAll(pids []int, sig syscall.Signal) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig) // one already gone is what we want
	}
}

// waitGone waits until none of pids runs (a zombie counts as gone: its parent reaps it),
// or d has passed.
func waitGone(pids []int, d time.Duration) {
	deadline := time.Now().Add(d)
	for _, pid := range pids {
		for running(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

// Remove stops and removes cluster id whoever made it, also one whose Up was killed half-way
// (the command's `down`). Nothing of id being left is no error.
func Remove(id string) error {
	if id == "" {
		return fmt.Errorf("%w: an empty cluster id", ErrInvalid)
	}
	if err := validID(id); err != nil {
		return err
	}
	return teardown(id)
}
