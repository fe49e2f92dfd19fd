package vcluster

import (
	"time"

	"go.uber.org/zap"
)

// DefaultCPUs is the number of CPUs SLURM is told each host has (see WithCPUs).
const DefaultCPUs = 8

type config struct {
	hosts  int
	subnet int
	rate   uint64 // bit/s per link; 0 is unlimited
	slurm  bool
	cpus   int
	id     string // fixed id (the command's cluster); random when empty
	log    *zap.Logger

	// A grid (sites.go); sites is 0 for one flat network.
	sites        int
	hostsPerSite int
	wanDelay     time.Duration
	wanRate      uint64
	wanLoss      float64
	firewall     []int
	nat          []int
	queueBytes   int
	emulator     string // the emulator program; the running binary when empty
}

// Option configures Up.
type Option func(*config)

// WithHosts sets the number of hosts (1 to 250; default 3).
func WithHosts(n int) Option { return func(c *config) { c.hosts = n } }

// WithSubnet sets S of the hosts' addresses 10.203.S.N (default 1). Clusters are isolated
// from each other, so two may use the same S.
func WithSubnet(s int) Option { return func(c *config) { c.subnet = s } }

// WithRate limits every host's link to bitsPerSec in each direction (tc tbf; see ParseRate).
func WithRate(bitsPerSec uint64) Option { return func(c *config) { c.rate = bitsPerSec } }

// WithSlurm starts SLURM on the cluster: a munged and a slurmctld of its own, on h1, and a
// slurmd on every host. Up returns once every node is idle.
func WithSlurm() Option { return func(c *config) { c.slurm = true } }

// WithCPUs sets how many CPUs SLURM believes each host has (default 8), more than the
// machine has where a test needs it: SLURM runs that many tasks on a host at once.
func WithCPUs(n int) Option { return func(c *config) { c.cpus = n } }

// WithLogger logs what Up and Close do (default: nothing).
func WithLogger(l *zap.Logger) Option { return func(c *config) { c.log = l } }

// WithID gives the cluster a fixed id instead of a random one (the command's cluster is
// ivc-cli): "ivc-" and lower-case letters and digits, at most 30 characters in all. Up
// fails where a cluster of that id is up.
func WithID(id string) Option { return func(c *config) { c.id = id } }
