// Package netns builds small virtual networks out of Linux network namespaces, for tests
// that need real network faults between real processes: a link taken down, then up again.
//
// A Network is one switch (a namespace holding a bridge) and hosts (one namespace each,
// with an interface eth0 cabled to the bridge by a veth pair and an address 10.203.S.N/24).
// Nothing is created in the caller's own namespace and no traffic leaves the network's
// namespaces. A process runs on a host through the prefix Host.Exec gives (`ip netns exec`).
// Creating namespaces needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) and the `ip` command;
// New fails with an error matching ErrUnavailable where they are missing, so tests can skip.
package netns

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// ErrUnavailable reports that this machine cannot build namespaces here (not root, no `ip`
// command, or the kernel refused).
var ErrUnavailable = errors.New("netns: network namespaces unavailable")

// ErrInvalid reports an option value that cannot work.
var ErrInvalid = errors.New("netns: invalid argument")

// cmdTimeout bounds one `ip` command; they take milliseconds.
const cmdTimeout = 30 * time.Second

// Network is a switch and its hosts. Close deletes all of it.
type Network struct {
	prefix   string // unique per Network: the start of every namespace name
	switchNS string
	subnet   int // the S of 10.203.S.0/24
	ipv6Only bool
	hosts    []*Host
}

// Host is one namespace on the network.
type Host struct {
	// Namespace is the name `ip netns` knows the host by.
	Namespace string
	// Addr is the host's address on the network (no prefix length): IPv4, or IPv6 with
	// WithIPv6Only.
	Addr string
	port string // the switch-side end of the host's cable
	sw   string // the namespace of the switch the cable plugs into
	site int    // 1-based site of a Grid's host; 0 on a Network
}

type config struct {
	subnet   int
	prefix   string // the namespaces' common name start; random when empty (see WithPrefix)
	ipv6Only bool   // hosts get an IPv6 address only (ipv6.go)
}

// Option configures New.
type Option func(*config)

// WithSubnet sets S of the network's addresses 10.203.S.0/24 (0 to 255; default 1).
// Networks are isolated from each other, so two may use the same S.
func WithSubnet(s int) Option { return func(c *config) { c.subnet = s } }

// New builds a network of n hosts (1 to 250): host i has address 10.203.S.(i+1). On error
// nothing it created is left behind.
func New(ctx context.Context, n int, opts ...Option) (*Network, error) {
	cfg := config{subnet: 1}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if n < 1 || n > 250 {
		return nil, fmt.Errorf("%w: %d hosts (1 to 250)", ErrInvalid, n)
	}
	if cfg.subnet < 0 || cfg.subnet > 255 {
		return nil, fmt.Errorf("%w: subnet %d (0 to 255)", ErrInvalid, cfg.subnet)
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: not root", ErrUnavailable)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if err := validPrefix(cfg.prefix); err != nil {
		return nil, err
	}
	if cfg.prefix == "" {
		var id [4]byte
		if _, err := rand.Read(id[:]); err != nil {
			return nil, fmt.Errorf("netns: a unique name: %w", err)
		}
		cfg.prefix = "ibis-" + hex.EncodeToString(id[:])
	}
	nw := &Network{prefix: cfg.prefix, subnet: cfg.subnet, ipv6Only: cfg.ipv6Only}
	nw.switchNS = nw.prefix + "-sw"
	if err := ip(ctx, "netns", "add", nw.switchNS); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if err := nw.build(ctx, n); err != nil {
		return nil, errors.Join(err, nw.Close())
	}
	return nw, nil
}

// build makes the bridge and the hosts; the switch namespace exists.
func (nw *Network) build(ctx context.Context, n int) error {
	sw := nw.switchNS
	steps := [][]string{
		{"-n", sw, "link", "set", "lo", "up"},
		{"-n", sw, "link", "add", "br0", "type", "bridge"},
		{"-n", sw, "link", "set", "br0", "up"},
	}
	for _, s := range steps {
		if err := ip(ctx, s...); err != nil {
			return err
		}
	}
	for i := range n {
		h := &Host{
			Namespace: nw.prefix + "-h" + strconv.Itoa(i),
			Addr:      nw.hostAddr(i),
			port:      "p" + strconv.Itoa(i),
			sw:        nw.switchNS,
		}
		if err := ip(ctx, "netns", "add", h.Namespace); err != nil {
			return err
		}
		nw.hosts = append(nw.hosts, h)
		steps := [][]string{
			// The cable: its host end is created straight in the host's namespace.
			{"-n", sw, "link", "add", h.port, "type", "veth", "peer", "name", "eth0", "netns", h.Namespace},
			{"-n", sw, "link", "set", h.port, "master", "br0"},
			{"-n", sw, "link", "set", h.port, "up"},
			{"-n", h.Namespace, "link", "set", "lo", "up"},
			nw.addrStep(h),
			{"-n", h.Namespace, "link", "set", "eth0", "up"},
		}
		for _, s := range steps {
			if err := ip(ctx, s...); err != nil {
				return err
			}
		}
	}
	return nil
}

// Hosts returns the network's hosts, in the order of their addresses.
func (nw *Network) Hosts() []*Host { return append([]*Host(nil), nw.hosts...) }

// Close deletes the hosts' and the switch's namespaces (their interfaces go with them). It
// may be called more than once; processes still running on a host keep their sockets, which
// no longer reach anything.
func (nw *Network) Close() error {
	var errs []error
	for _, h := range nw.hosts {
		errs = append(errs, deleteNS(h.Namespace))
	}
	nw.hosts = nil
	if nw.switchNS != "" {
		errs = append(errs, deleteNS(nw.switchNS))
		nw.switchNS = ""
	}
	return errors.Join(errs...)
}

func deleteNS(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	return ip(ctx, "netns", "delete", name)
}

// Exec is the command prefix that runs a program on the host: append the program and its
// arguments (or pass it to selfexec.WithLauncher). The program's process id is the one the
// caller starts (`ip netns exec` execs it), so signals reach it directly.
func (h *Host) Exec() []string { return []string{"ip", "netns", "exec", h.Namespace} }

// LinkDown unplugs the host's cable at the switch: nothing passes between the host and the
// rest of the network, in either direction, until LinkUp. Connections are not told; their
// packets are lost, as on a real link that went down.
func (h *Host) LinkDown(ctx context.Context) error {
	return ip(ctx, "-n", h.sw, "link", "set", h.port, "down")
}

// LinkUp plugs the host's cable in again.
func (h *Host) LinkUp(ctx context.Context) error {
	return ip(ctx, "-n", h.sw, "link", "set", h.port, "up")
}

// ip runs the ip command with args and returns its error with what it printed.
func ip(ctx context.Context, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, cmdTimeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "ip", args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("netns: ip %q: %w: %s", args, err, bytes.TrimSpace(out.Bytes()))
	}
	return nil
}
