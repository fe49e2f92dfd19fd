package vcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/netns"
)

// ErrUnavailable reports that this machine cannot build a virtual cluster (or the part
// asked for): not root, or a command missing. The error says which.
var ErrUnavailable = errors.New("vcluster: unavailable here")

// ErrInvalid reports an option or argument that cannot work.
var ErrInvalid = errors.New("vcluster: invalid argument")

// ErrNoHost reports a host name the cluster does not have.
var ErrNoHost = errors.New("vcluster: no such host")

// Cluster is a virtual cluster. Close removes it.
type Cluster struct {
	st  state
	dir string
	log *zap.Logger

	mu      sync.Mutex
	daemons []*daemon // started by this process; stopped by Close
	closed  bool
}

// Host is one host of the cluster.
type Host struct {
	// Name is the host's name, h1 to hN: its hostname, and how the others resolve it.
	Name string `json:"name"`
	// Addr is its IPv4 address on the cluster's network.
	Addr string `json:"addr"`
	// Namespace is the network namespace `ip netns` knows it by.
	Namespace string `json:"namespace"`
	// SwitchPort is its cable's end at the switch, in namespace ID-sw (in Switch on a
	// grid).
	SwitchPort string `json:"switch_port"`
	// Site is the host's site on a grid (1 is the first; see WithSites), 0 otherwise.
	Site int `json:"site,omitempty"`
	// Switch is the namespace of the host's site's switch on a grid.
	Switch string `json:"switch,omitempty"`
}

// Up builds a cluster (see the options; by default 3 hosts, no rate limit, no SLURM). On
// error, or when ctx ends first, nothing it made is left behind. Clusters of owners that
// died without Close are swept first.
func Up(ctx context.Context, opts ...Option) (*Cluster, error) {
	cfg := config{hosts: 3, subnet: 1, cpus: DefaultCPUs}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.log == nil {
		cfg.log = zap.NewNop()
	}
	if cfg.hosts < 1 || cfg.hosts > 250 {
		return nil, fmt.Errorf("%w: %d hosts (1 to 250)", ErrInvalid, cfg.hosts)
	}
	if cfg.cpus < 1 || cfg.cpus > 1024 {
		return nil, fmt.Errorf("%w: %d CPUs per host (1 to 1024)", ErrInvalid, cfg.cpus)
	}
	if err := validID(cfg.id); err != nil {
		return nil, err
	}
	if err := cfg.checkGrid(); err != nil {
		return nil, err
	}
	if cfg.rate != 0 && cfg.rate < 8000 {
		return nil, fmt.Errorf("%w: rate %d bit/s (at least 8000)", ErrInvalid, cfg.rate)
	}
	needs := cfg.gridNeeds()
	if cfg.rate != 0 {
		needs = append(needs, NeedTC)
	}
	if cfg.slurm {
		needs = append(needs, NeedSlurm)
	}
	if err := Unavailable(needs...); err != nil {
		return nil, err
	}
	if err := Sweep(ctx, cfg.log); err != nil {
		cfg.log.Warn("vcluster: sweeping stale clusters", zap.Error(err))
	}
	id := cfg.id
	if id == "" {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("vcluster: a unique id: %w", err)
		}
		id = "ivc-" + hex.EncodeToString(b[:])
	}
	owner, err := self()
	if err != nil {
		return nil, err
	}
	c := &Cluster{
		st:  state{ID: id, Owner: owner, Slurm: cfg.slurm, CPUs: cfg.cpus},
		dir: filepath.Join(StateRoot, id),
		log: cfg.log,
	}
	if err := os.MkdirAll(StateRoot, 0o711); err != nil {
		return nil, fmt.Errorf("vcluster: %w", err)
	}
	if err := os.Mkdir(c.dir, 0o711); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("%w: cluster %s exists (%s)", ErrInvalid, id, c.dir)
		}
		return nil, fmt.Errorf("vcluster: %w", err)
	}
	// The owner is on disk before anything else exists, so a sweep can find all of it.
	if err := c.save(); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	if err := c.build(ctx, cfg); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	cfg.log.Info("vcluster: up", zap.String("id", id), zap.Int("hosts", len(c.st.Hosts)), zap.Int("sites", len(c.st.Sites)))
	return c, nil
}

// build makes the network, the hosts' files and, when asked, SLURM.
func (c *Cluster) build(ctx context.Context, cfg config) error {
	var hosts []*netns.Host
	if cfg.sites > 0 {
		var err error
		if hosts, err = c.buildGrid(ctx, cfg); err != nil {
			return err
		}
	} else {
		nw, err := netns.New(ctx, cfg.hosts, netns.WithPrefix(c.st.ID), netns.WithSubnet(cfg.subnet))
		if err != nil {
			return fmt.Errorf("vcluster: %w", err)
		}
		hosts = nw.Hosts()
	}
	for i, h := range hosts {
		vh := Host{Name: "h" + strconv.Itoa(i+1), Addr: h.Addr, Namespace: h.Namespace, SwitchPort: h.SwitchPort(), Site: h.Site()}
		if h.Site() > 0 {
			vh.Switch = h.SwitchNamespace()
		}
		c.st.Hosts = append(c.st.Hosts, vh)
	}
	c.nameSiteHosts()
	if err := c.save(); err != nil {
		return err
	}
	if err := c.writeHostsFiles(); err != nil {
		return err
	}
	if cfg.sites > 0 {
		if err := c.startEmulator(ctx, cfg); err != nil {
			return err
		}
	}
	if cfg.rate != 0 {
		for _, h := range hosts {
			if err := h.SetRate(ctx, cfg.rate); err != nil {
				return fmt.Errorf("vcluster: %w", err)
			}
		}
	}
	if err := c.writeMPIFiles(); err != nil {
		return err
	}
	if cfg.slurm {
		if err := c.startSlurm(ctx); err != nil {
			return err
		}
	}
	return c.save()
}

// ID returns the cluster's id, the start of every name it made.
func (c *Cluster) ID() string { return c.st.ID }

// Dir returns the cluster's state directory.
func (c *Cluster) Dir() string { return c.dir }

// Hosts returns the cluster's hosts, h1 first.
func (c *Cluster) Hosts() []Host { return append([]Host(nil), c.st.Hosts...) }

// Host returns the host called name (h1 to hN).
func (c *Cluster) Host(name string) (Host, error) {
	for _, h := range c.st.Hosts {
		if h.Name == name {
			return h, nil
		}
	}
	return Host{}, fmt.Errorf("%w: %q (the cluster has h1 to h%d)", ErrNoHost, name, len(c.st.Hosts))
}

// Exec returns the command prefix that runs a program on the host: append the program and
// its arguments, or pass it to selfexec.WithLauncher. The program keeps the process id the
// caller starts (every step execs), so signals reach it. See hostScript for what it does.
func (c *Cluster) Exec(host string) ([]string, error) {
	h, err := c.Host(host)
	if err != nil {
		return nil, err
	}
	return []string{"nsenter", "--net=/run/netns/" + h.Namespace, "--",
		"unshare", "--mount", "--uts", "--", "sh", "-c", hostScript, h.Name, h.Namespace, c.dir}, nil
}

// hostScript runs "$@" as a process of host $0 (network namespace $1, cluster directory
// $2): in a UTS namespace of its own named $0, and in a private mount namespace where
// /etc/hosts is the cluster's and $2/tmp is the host's own (SLURM's TmpFS: srun --mpi=pmix
// makes directories there named by job only, which two hosts must not share). It does what
// `ip netns exec` does, but keeps the machine's /sys, and so its cgroup mounts, which slurmd
// needs.
const hostScript = `mount --bind "/etc/netns/$1/hosts" /etc/hosts && mount --bind "$2/tmp-$0" "$2/tmp" && echo "$0" >/proc/sys/kernel/hostname && shift 2 && exec "$@"`

// Command returns a command that runs name with args on host. An unknown host gives a
// command whose Run, Start or Output fails with an error matching ErrNoHost.
func (c *Cluster) Command(ctx context.Context, host, name string, args ...string) *exec.Cmd {
	prefix, err := c.Exec(host)
	if err != nil {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Err = err
		return cmd
	}
	argv := append(append(prefix, name), args...)
	return exec.CommandContext(ctx, argv[0], argv[1:]...)
}

// writeHostsFiles makes each host's own directory for $dir/tmp (see hostScript) and gives every host an /etc/hosts naming all hosts, /etc/netns/NS/hosts,
// which Exec and `ip netns exec` mount over /etc/hosts; the machine's own is not touched.
func (c *Cluster) writeHostsFiles() error {
	var b strings.Builder
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	for _, h := range c.st.Hosts {
		fmt.Fprintf(&b, "%s\t%s\n", h.Addr, h.Name)
	}
	for _, d := range []string{"tmp"} {
		if err := os.MkdirAll(filepath.Join(c.dir, d), 0o1777); err != nil {
			return fmt.Errorf("vcluster: %w", err)
		}
	}
	for _, h := range c.st.Hosts {
		if err := os.MkdirAll(filepath.Join(c.dir, "tmp-"+h.Name), 0o1777); err != nil {
			return fmt.Errorf("vcluster: %w", err)
		}
		d := filepath.Join(etcNetns, h.Namespace)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("vcluster: %w", err)
		}
		if err := os.WriteFile(filepath.Join(d, "hosts"), []byte(b.String()), 0o644); err != nil {
			return fmt.Errorf("vcluster: %w", err)
		}
	}
	return nil
}

// Persist hands the cluster over to whoever calls Close or Attach later: the owner's exit
// no longer makes it stale. The command's `up` uses it.
func (c *Cluster) Persist() error {
	c.st.Persistent = true
	return c.save()
}

// Close stops every process on the cluster (SLURM's daemons, munged and anything started
// on a host) and removes its namespaces, files and state directory. It may be called more
// than once.
func (c *Cluster) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	var errs []error
	for i := len(c.daemons) - 1; i >= 0; i-- {
		errs = append(errs, c.daemons[i].stop())
	}
	c.daemons = nil
	errs = append(errs, teardown(c.st.ID))
	c.log.Info("vcluster: down", zap.String("id", c.st.ID))
	return errors.Join(errs...)
}

// validID checks a WithID value ("" is a random id).
func validID(id string) error {
	if id == "" {
		return nil
	}
	rest, ok := strings.CutPrefix(id, "ivc-")
	if !ok || rest == "" || len(id) > 30 {
		return fmt.Errorf("%w: cluster id %q: want ivc- and up to 26 letters and digits", ErrInvalid, id)
	}
	for _, r := range rest {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return fmt.Errorf("%w: cluster id %q: after ivc- only a-z and 0-9", ErrInvalid, id)
		}
	}
	return nil
}
