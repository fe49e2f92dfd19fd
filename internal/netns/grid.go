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
	"strings"
)

// SiteSpec describes one site of a Grid.
type SiteSpec struct {
	// Hosts is the number of hosts of the site (1 to 250).
	Hosts int
	// Firewall makes the site's gateway drop every connection opened from another site;
	// connections from the site out, and their answers, pass.
	Firewall bool
	// NAT puts the site's hosts in a private range (192.168.K.0/24) behind the gateway's
	// one wide-area address, which masquerades; no other site has a route to the range,
	// and the gateway drops what it did not see go out.
	NAT bool
	// Rate limits the site's wide-area link to bits per second in each direction (tc tbf
	// on the gateway's and the router's end); 0 is no limit.
	Rate uint64
}

// Site is one site of a Grid: a switch (bridge) with the site's hosts and its gateway, which
// has a wide-area link to the grid's router.
type Site struct {
	// Index is the site's number, 1 for the first.
	Index int
	// Switch and Gateway are the namespaces of the site's bridge and its gateway.
	Switch, Gateway string
	// Prefix is the hosts' network, e.g. 10.203.2.0/24 (192.168.2.0/24 behind NAT).
	Prefix string
	// LANAddr is the gateway's address on the site's network: the hosts' default route.
	LANAddr string
	// WANAddr is the gateway's address on the wide-area link, and under NAT the one
	// address the site's hosts are seen at from other sites.
	WANAddr string
	// RouterAddr is the router's address on the site's link; RouterPort its interface
	// there, in the router namespace.
	RouterAddr, RouterPort string
	// WANPrefix is the link's network (10.204.K.0/24).
	WANPrefix string
	Firewall  bool
	NAT       bool
	// Hosts are the site's hosts.
	Hosts []*Host
}

// Grid is sites joined by a router. Close deletes all of it.
type Grid struct {
	prefix string
	router string
	sites  []*Site
	hosts  []*Host
	nss    []string // every namespace made, in order
}

// RouteTable is the router's policy routing table that sends packets between sites to
// the emulator's TUN device; TUNDevice is that device's name, in the router namespace.
const (
	RouteTable = "100"
	TUNDevice  = "wan0"
)

// gridOnlyPorts: a site's switch port to its gateway, and the gateway's two interfaces.
const (
	gwPort  = "gw"
	gwLAN   = "lan"
	gwWAN   = "wan"
	maxGrid = 64
)

// NewGrid builds sites joined by one router namespace (prefix-rt). Site K's switch is
// prefix-swK, its gateway prefix-gwK; hosts are prefix-hI, numbered across the sites in
// order, with address 10.203.K.N/24 (N from 1; 192.168.K.N with NAT) and the gateway
// (.254) as default route. The router forwards between the sites' links, but a packet
// that comes in on a site's link is first handed to the TUN device TUNDevice (policy
// routing table RouteTable), where the link emulator (internal/wanemu) reads it and
// writes it back after its delay; until one runs, nothing passes between sites. Only
// WithPrefix of the options applies. On error nothing it created is left behind.
func NewGrid(ctx context.Context, sites []SiteSpec, opts ...Option) (*Grid, error) {
	cfg := config{}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if len(sites) < 1 || len(sites) > maxGrid {
		return nil, fmt.Errorf("%w: %d sites (1 to %d)", ErrInvalid, len(sites), maxGrid)
	}
	total := 0
	for i, s := range sites {
		if s.Hosts < 1 || s.Hosts > 250 {
			return nil, fmt.Errorf("%w: site %d: %d hosts (1 to 250)", ErrInvalid, i+1, s.Hosts)
		}
		if s.Rate != 0 && s.Rate < 8000 {
			return nil, fmt.Errorf("%w: site %d: rate %d bit/s (at least 8000)", ErrInvalid, i+1, s.Rate)
		}
		total += s.Hosts
	}
	if total > 1000 {
		return nil, fmt.Errorf("%w: %d hosts in all (at most 1000)", ErrInvalid, total)
	}
	if err := validPrefix(cfg.prefix); err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: not root", ErrUnavailable)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if cfg.prefix == "" {
		var id [4]byte
		if _, err := rand.Read(id[:]); err != nil {
			return nil, fmt.Errorf("netns: a unique name: %w", err)
		}
		cfg.prefix = "ibis-" + hex.EncodeToString(id[:])
	}
	g := &Grid{prefix: cfg.prefix, router: cfg.prefix + "-rt"}
	if err := g.build(ctx, sites); err != nil {
		return nil, errors.Join(err, g.Close())
	}
	return g, nil
}

// addNS makes namespace name with its loopback up.
func (g *Grid) addNS(ctx context.Context, name string) error {
	if err := ip(ctx, "netns", "add", name); err != nil {
		return err
	}
	g.nss = append(g.nss, name)
	return ip(ctx, "-n", name, "link", "set", "lo", "up")
}

func (g *Grid) build(ctx context.Context, specs []SiteSpec) error {
	if err := g.addNS(ctx, g.router); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if err := g.buildRouter(ctx); err != nil {
		return err
	}
	for i, spec := range specs {
		if err := g.buildSite(ctx, i+1, spec); err != nil {
			return err
		}
	}
	return nil
}

// buildRouter sets the router up: forwarding, no reverse-path filter (packets from the TUN
// device come from every site), the TUN device and its routing table.
func (g *Grid) buildRouter(ctx context.Context) error {
	rt := g.router
	if err := sysctl(ctx, rt, "net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0",
		"net.ipv4.conf.default.rp_filter=0", "net.ipv4.conf.all.send_redirects=0",
		"net.ipv4.conf.default.send_redirects=0"); err != nil {
		return err
	}
	steps := [][]string{
		{"-n", rt, "tuntap", "add", "dev", TUNDevice, "mode", "tun"},
		{"-n", rt, "link", "set", TUNDevice, "up"},
		{"-n", rt, "route", "add", "default", "dev", TUNDevice, "table", RouteTable},
	}
	for _, s := range steps {
		if err := ip(ctx, s...); err != nil {
			return err
		}
	}
	return nil
}

// buildSite makes site k: its switch, gateway, hosts and link to the router.
func (g *Grid) buildSite(ctx context.Context, k int, spec SiteSpec) error {
	ks := strconv.Itoa(k)
	net := fmt.Sprintf("10.203.%d", k)
	if spec.NAT {
		net = fmt.Sprintf("192.168.%d", k)
	}
	s := &Site{
		Index: k, Switch: g.prefix + "-sw" + ks, Gateway: g.prefix + "-gw" + ks,
		Prefix: net + ".0/24", LANAddr: net + ".254",
		WANAddr: fmt.Sprintf("10.204.%d.2", k), RouterAddr: fmt.Sprintf("10.204.%d.1", k),
		RouterPort: "w" + ks, WANPrefix: fmt.Sprintf("10.204.%d.0/24", k),
		Firewall: spec.Firewall, NAT: spec.NAT,
	}
	g.sites = append(g.sites, s)
	for _, ns := range []string{s.Switch, s.Gateway} {
		if err := g.addNS(ctx, ns); err != nil {
			return err
		}
	}
	sw, gw, rt := s.Switch, s.Gateway, g.router
	steps := [][]string{
		{"-n", sw, "link", "add", "br0", "type", "bridge"},
		{"-n", sw, "link", "set", "br0", "up"},
		{"-n", sw, "link", "add", gwPort, "type", "veth", "peer", "name", gwLAN, "netns", gw},
		{"-n", sw, "link", "set", gwPort, "master", "br0"},
		{"-n", sw, "link", "set", gwPort, "up"},
		{"-n", gw, "addr", "add", s.LANAddr + "/24", "dev", gwLAN},
		{"-n", gw, "link", "set", gwLAN, "up"},
		{"-n", rt, "link", "add", s.RouterPort, "type", "veth", "peer", "name", gwWAN, "netns", gw},
		{"-n", rt, "addr", "add", s.RouterAddr + "/24", "dev", s.RouterPort},
		{"-n", rt, "link", "set", s.RouterPort, "up"},
		{"-n", gw, "addr", "add", s.WANAddr + "/24", "dev", gwWAN},
		{"-n", gw, "link", "set", gwWAN, "up"},
		{"-n", gw, "route", "add", "default", "via", s.RouterAddr},
		{"-n", rt, "rule", "add", "iif", s.RouterPort, "lookup", RouteTable, "priority", "100"},
	}
	if !spec.NAT {
		steps = append(steps, []string{"-n", rt, "route", "add", s.Prefix, "via", s.WANAddr})
	}
	for _, st := range steps {
		if err := ip(ctx, st...); err != nil {
			return err
		}
	}
	if err := sysctl(ctx, gw, "net.ipv4.ip_forward=1"); err != nil {
		return err
	}
	if err := g.guard(ctx, s); err != nil {
		return err
	}
	for n := range spec.Hosts {
		h := &Host{
			Namespace: g.prefix + "-h" + strconv.Itoa(len(g.hosts)),
			Addr:      fmt.Sprintf("%s.%d", net, n+1),
			port:      "p" + strconv.Itoa(n),
			sw:        sw,
			site:      k,
		}
		if err := g.addNS(ctx, h.Namespace); err != nil {
			return err
		}
		g.hosts = append(g.hosts, h)
		s.Hosts = append(s.Hosts, h)
		steps := [][]string{
			{"-n", sw, "link", "add", h.port, "type", "veth", "peer", "name", "eth0", "netns", h.Namespace},
			{"-n", sw, "link", "set", h.port, "master", "br0"},
			{"-n", sw, "link", "set", h.port, "up"},
			{"-n", h.Namespace, "addr", "add", h.Addr + "/24", "dev", "eth0"},
			{"-n", h.Namespace, "link", "set", "eth0", "up"},
			{"-n", h.Namespace, "route", "add", "default", "via", s.LANAddr},
		}
		for _, st := range steps {
			if err := ip(ctx, st...); err != nil {
				return err
			}
		}
	}
	if spec.Rate != 0 {
		if err := setTBF(ctx, gw, gwWAN, spec.Rate); err != nil {
			return err
		}
		if err := setTBF(ctx, rt, s.RouterPort, spec.Rate); err != nil {
			return err
		}
	}
	return nil
}

// guard sets the gateway's firewall and NAT rules: with either, what comes in from the
// wide-area link passes only as part of a connection opened from inside; with NAT, what
// goes out carries the gateway's address.
func (g *Grid) guard(ctx context.Context, s *Site) error {
	if !s.Firewall && !s.NAT {
		return nil
	}
	if _, err := exec.LookPath("iptables"); err != nil {
		return fmt.Errorf("%w: %w (Debian: apt-get install iptables)", ErrUnavailable, err)
	}
	var rules [][]string
	if s.NAT {
		rules = append(rules, []string{"-t", "nat", "-A", "POSTROUTING", "-o", gwWAN, "-j", "MASQUERADE"})
	}
	for _, chain := range []string{"FORWARD", "INPUT"} {
		rules = append(rules,
			[]string{"-A", chain, "-i", gwWAN, "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT"},
			[]string{"-A", chain, "-i", gwWAN, "-j", "DROP"})
	}
	for _, r := range rules {
		if err := inNS(ctx, s.Gateway, append([]string{"iptables", "-w"}, r...)...); err != nil {
			return err
		}
	}
	return nil
}

// Sites returns the grid's sites, site 1 first.
func (g *Grid) Sites() []*Site { return append([]*Site(nil), g.sites...) }

// Hosts returns every host of the grid, site by site.
func (g *Grid) Hosts() []*Host { return append([]*Host(nil), g.hosts...) }

// Router returns the router's namespace.
func (g *Grid) Router() string { return g.router }

// Close deletes every namespace of the grid (hosts first). It may be called more than once.
func (g *Grid) Close() error {
	var errs []error
	for i := len(g.nss) - 1; i >= 0; i-- {
		errs = append(errs, deleteNS(g.nss[i]))
	}
	g.nss, g.hosts, g.sites = nil, nil, nil
	return errors.Join(errs...)
}

// sysctl sets kernel variables (key=value, e.g. net.ipv4.ip_forward=1) in namespace ns,
// through /proc/sys, which shows the variables of the namespace the writer is in.
func sysctl(ctx context.Context, ns string, kv ...string) error {
	for _, v := range kv {
		key, val, ok := strings.Cut(v, "=")
		if !ok {
			return fmt.Errorf("%w: sysctl %q", ErrInvalid, v)
		}
		path := "/proc/sys/" + strings.ReplaceAll(key, ".", "/")
		if err := inNS(ctx, ns, "sh", "-c", `echo "$1" >"$0"`, path, val); err != nil {
			return err
		}
	}
	return nil
}

// inNS runs argv in namespace ns (`ip netns exec`) and returns its error with its output.
func inNS(ctx context.Context, ns string, argv ...string) error {
	ctx, cancel := context.WithTimeout(ctx, cmdTimeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns}, argv...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("netns: %q in %s: %w: %s", argv, ns, err, bytes.TrimSpace(out.Bytes()))
	}
	return nil
}
