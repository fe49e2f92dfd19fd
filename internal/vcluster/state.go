package vcluster

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// StateRoot holds one directory per cluster, named by its id.
const StateRoot = "/run/ibis-vcluster"

// etcNetns is where `ip netns exec` finds a namespace's own /etc files.
const etcNetns = "/etc/netns"

// state is what a cluster writes to StateRoot/ID/state.json: enough to find, use and remove
// it from another process (the command's exec and down, or a sweep).
type state struct {
	ID         string `json:"id"`
	Owner      owner  `json:"owner"`
	Persistent bool   `json:"persistent"` // not swept when the owner is gone (see Persist)
	Hosts      []Host `json:"hosts"`
	Slurm      bool   `json:"slurm"`
	CPUs       int    `json:"cpus"`
	Sites      []Site `json:"sites,omitempty"` // a grid's sites (sites.go)
	Router     string `json:"router,omitempty"`
	// WANControl is the emulator's control socket on a grid.
	WANControl string `json:"wan_control,omitempty"`
}

// owner identifies a process across pid reuse: its pid and its start time in clock ticks.
type owner struct {
	PID   int    `json:"pid"`
	Start string `json:"start"`
}

func (c *Cluster) save() error {
	b, err := json.MarshalIndent(c.st, "", "  ")
	if err != nil {
		return fmt.Errorf("vcluster: %w", err)
	}
	tmp := filepath.Join(c.dir, "state.json.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("vcluster: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(c.dir, "state.json")); err != nil {
		return fmt.Errorf("vcluster: %w", err)
	}
	return nil
}

func loadState(id string) (state, error) {
	var st state
	b, err := os.ReadFile(filepath.Join(StateRoot, id, "state.json"))
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("vcluster: %s/state.json: %w", id, err)
	}
	if st.ID != id {
		return st, fmt.Errorf("vcluster: %s/state.json names cluster %q", id, st.ID)
	}
	return st, nil
}

// Attach returns the cluster id that another process built (the command's `up`), to run
// commands on it or Close it. It starts nothing.
func Attach(id string) (*Cluster, error) {
	if err := validID(id); err != nil || id == "" {
		return nil, cmp.Or(err, fmt.Errorf("%w: attach needs a cluster id", ErrInvalid))
	}
	st, err := loadState(id)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: no cluster %s is up (no %s)", ErrInvalid, id, filepath.Join(StateRoot, id))
	}
	if err != nil {
		return nil, err
	}
	return &Cluster{st: st, dir: filepath.Join(StateRoot, id), log: nopLogger()}, nil
}

// self returns this process as an owner.
func self() (owner, error) {
	pid := os.Getpid()
	start, err := startTime(pid)
	if err != nil {
		return owner{}, fmt.Errorf("vcluster: this process's start time: %w", err)
	}
	return owner{PID: pid, Start: start}, nil
}

// alive reports whether the owner still runs: its pid exists and started when it did.
func (o owner) alive() bool {
	if o.PID <= 0 {
		return false
	}
	start, err := startTime(o.PID)
	return err == nil && start == o.Start
}

// startTime reads field 22 of /proc/PID/stat; the command name before it may hold spaces,
// so fields are counted after its closing parenthesis.
func startTime(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "", fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	return f[19], nil // field 22: the state is field 3, f[0]
}
