package vcluster

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ibisgo/ibis/internal/netns"
	"github.com/ibisgo/ibis/internal/wanemu"
)

// Site is one site of a grid (WithSites): a switch with its hosts, and a gateway with a
// wide-area link to the grid's router.
type Site struct {
	// Name is s1, s2, ...; Index its number, 1 for the first.
	Name  string `json:"name"`
	Index int    `json:"index"`
	// Hosts are the names of the site's hosts.
	Hosts []string `json:"hosts"`
	// Prefix is the hosts' network: 10.203.K.0/24, or 192.168.K.0/24 behind NAT.
	Prefix string `json:"prefix"`
	// Gateway is the gateway's namespace; GatewayAddr its address on the site's network.
	Gateway     string `json:"gateway"`
	GatewayAddr string `json:"gateway_addr"`
	// PublicAddr is the gateway's wide-area address: under NAT, the one address the
	// site's hosts are seen at from the other sites.
	PublicAddr string `json:"public_addr"`
	// Firewall: no connection opened from another site reaches the site's hosts.
	Firewall bool `json:"firewall,omitempty"`
	// NAT: the hosts sit behind PublicAddr and cannot be dialled from other sites.
	NAT bool `json:"nat,omitempty"`
}

// WithSites builds a grid instead of one network: sites sites (1 to 64) of hostsPerSite
// hosts each (h1 .. hN across the sites in order: site 1 holds h1 .. h<hostsPerSite>),
// each with its own switch and a gateway, the gateways joined by a router whose link
// emulator delays and drops the packets between sites (WithWAN). It replaces WithHosts;
// WithSubnet does not apply (site K's hosts are 10.203.K.0/24).
func WithSites(sites, hostsPerSite int) Option {
	return func(c *config) { c.sites, c.hostsPerSite = sites, hostsPerSite }
}

// WithWAN sets every site's wide-area link: the one-way delay between two sites (the
// round trip is twice it), the rate of each site's link in each direction in bit/s (tc
// tbf; 0 is no limit) and the share of packets lost between two sites (0 to 1).
func WithWAN(delay time.Duration, bitsPerSec uint64, loss float64) Option {
	return func(c *config) { c.wanDelay, c.wanRate, c.wanLoss = delay, bitsPerSec, loss }
}

// WithFirewall makes sites (1 is the first) firewalled: their hosts accept no connection
// opened from another site; connections from them out work.
func WithFirewall(sites ...int) Option {
	return func(c *config) { c.firewall = append(c.firewall, sites...) }
}

// WithNAT puts the hosts of sites (1 is the first) behind their gateway's one public
// address (masquerade): they can dial out, and cannot be dialled from other sites.
func WithNAT(sites ...int) Option {
	return func(c *config) { c.nat = append(c.nat, sites...) }
}

// WithEmulator runs the wide-area emulator from program (cmd/ibis-wanemu) instead of the
// running binary, which holds a copy (see the package doc).
func WithEmulator(program string) Option { return func(c *config) { c.emulator = program } }

// WithWANQueue bounds the bytes the emulator holds per pair of sites (default
// wanemu.DefaultQueueBytes); beyond it packets are dropped and counted.
func WithWANQueue(bytes int) Option { return func(c *config) { c.queueBytes = bytes } }

// checkGrid checks the grid options; without WithSites none of them may be given.
func (c *config) checkGrid() error {
	if c.sites == 0 {
		if c.wanDelay != 0 || c.wanRate != 0 || c.wanLoss != 0 || len(c.firewall) > 0 || len(c.nat) > 0 {
			return fmt.Errorf("%w: wide-area, firewall and NAT options need WithSites", ErrInvalid)
		}
		return nil
	}
	if c.sites < 1 || c.sites > wanemu.MaxSites {
		return fmt.Errorf("%w: %d sites (1 to %d)", ErrInvalid, c.sites, wanemu.MaxSites)
	}
	if c.hostsPerSite < 1 || c.hostsPerSite > 250 || c.sites*c.hostsPerSite > 1000 {
		return fmt.Errorf("%w: %d hosts per site (1 to 250, 1000 in all)", ErrInvalid, c.hostsPerSite)
	}
	if c.wanDelay < 0 || c.wanDelay > 10*time.Second {
		return fmt.Errorf("%w: wide-area delay %v (0 to 10s)", ErrInvalid, c.wanDelay)
	}
	if c.wanRate != 0 && c.wanRate < 8000 {
		return fmt.Errorf("%w: wide-area rate %d bit/s (at least 8000)", ErrInvalid, c.wanRate)
	}
	if !(c.wanLoss >= 0 && c.wanLoss <= 1) {
		return fmt.Errorf("%w: wide-area loss %v (0 to 1)", ErrInvalid, c.wanLoss)
	}
	if c.queueBytes < 0 {
		return fmt.Errorf("%w: wide-area queue of %d bytes", ErrInvalid, c.queueBytes)
	}
	if c.slurm && (len(c.firewall) > 0 || len(c.nat) > 0) {
		return fmt.Errorf("%w: SLURM needs every host to reach h1 and h1 every host: no firewalled or NATed site", ErrInvalid)
	}
	for _, k := range append(slices.Clone(c.firewall), c.nat...) {
		if k < 1 || k > c.sites {
			return fmt.Errorf("%w: site %d (the grid has sites 1 to %d)", ErrInvalid, k, c.sites)
		}
	}
	return nil
}

// gridNeeds lists what a grid needs besides the network.
func (c *config) gridNeeds() []Need {
	if c.sites == 0 {
		return nil
	}
	needs := []Need{NeedTUN}
	if c.wanRate != 0 {
		needs = append(needs, NeedTC)
	}
	if len(c.firewall) > 0 || len(c.nat) > 0 {
		needs = append(needs, NeedIPTables)
	}
	return needs
}

// buildGrid makes the sites and the router and records them.
func (c *Cluster) buildGrid(ctx context.Context, cfg config) ([]*netns.Host, error) {
	specs := make([]netns.SiteSpec, cfg.sites)
	for i := range specs {
		specs[i] = netns.SiteSpec{Hosts: cfg.hostsPerSite, Rate: cfg.wanRate,
			Firewall: slices.Contains(cfg.firewall, i+1), NAT: slices.Contains(cfg.nat, i+1)}
	}
	g, err := netns.NewGrid(ctx, specs, netns.WithPrefix(c.st.ID))
	if err != nil {
		return nil, fmt.Errorf("vcluster: %w", err)
	}
	c.st.Router = g.Router()
	for _, s := range g.Sites() {
		c.st.Sites = append(c.st.Sites, Site{Name: "s" + strconv.Itoa(s.Index), Index: s.Index,
			Prefix: s.Prefix, Gateway: s.Gateway, GatewayAddr: s.LANAddr, PublicAddr: s.WANAddr,
			Firewall: s.Firewall, NAT: s.NAT})
	}
	return g.Hosts(), nil
}

// nameSiteHosts fills each site's host names from the hosts.
func (c *Cluster) nameSiteHosts() {
	for _, h := range c.st.Hosts {
		if h.Site > 0 && h.Site <= len(c.st.Sites) {
			s := &c.st.Sites[h.Site-1]
			s.Hosts = append(s.Hosts, h.Name)
		}
	}
}

// emulatorConfig is the emulator's configuration for the cluster's sites.
func (c *Cluster) emulatorConfig(cfg config) wanemu.Config {
	ec := wanemu.Config{Device: netns.TUNDevice, Control: c.st.WANControl, QueueBytes: cfg.queueBytes}
	for _, s := range c.st.Sites {
		k := s.Index
		ec.Sites = append(ec.Sites, wanemu.Site{Name: s.Name, Delay: cfg.wanDelay, Loss: cfg.wanLoss,
			Prefixes: []netip.Prefix{netip.MustParsePrefix(s.Prefix), netip.MustParsePrefix(fmt.Sprintf("10.204.%d.0/24", k))}})
	}
	return ec
}

// Sites returns the grid's sites, s1 first (none without WithSites).
func (c *Cluster) Sites() []Site {
	out := slices.Clone(c.st.Sites)
	for i := range out {
		out[i].Hosts = slices.Clone(out[i].Hosts)
	}
	return out
}

// ParseSites reads a list of site numbers such as "2" or "2,4" (empty: none).
func ParseSites(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		k, err := strconv.Atoi(f)
		if err != nil || k < 1 {
			return nil, fmt.Errorf("%w: site %q: want numbers from 1, e.g. 2,4", ErrInvalid, f)
		}
		out = append(out, k)
	}
	return out, nil
}

// ParseLoss reads a share of packets lost: "0.1%" or a fraction such as "0.001".
func ParseLoss(s string) (float64, error) {
	t := strings.TrimSpace(s)
	scale := 1.0
	if v, ok := strings.CutSuffix(t, "%"); ok {
		t, scale = v, 100
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v/scale >= 0 && v/scale <= 1) {
		return 0, fmt.Errorf("%w: loss %q: want 0 to 100%% (e.g. 0.1%%) or 0 to 1", ErrInvalid, s)
	}
	return v / scale, nil
}
