package netns

import "fmt"

// WithIPv6Only gives each host the IPv6 address fd00:203:S::N/64 (N = i+1) and no IPv4
// one; Host.Addr is then that address. The address is usable at once (no duplicate
// address detection).
func WithIPv6Only() Option { return func(c *config) { c.ipv6Only = true } }

// hostAddr is the address of host i.
func (nw *Network) hostAddr(i int) string {
	if nw.ipv6Only {
		return fmt.Sprintf("fd00:203:%x::%x", nw.subnet, i+1)
	}
	return fmt.Sprintf("10.203.%d.%d", nw.subnet, i+1)
}

// addrStep is the ip command that gives h its address.
func (nw *Network) addrStep(h *Host) []string {
	if nw.ipv6Only {
		return []string{"-n", h.Namespace, "-6", "addr", "add", h.Addr + "/64", "dev", "eth0", "nodad"}
	}
	return []string{"-n", h.Namespace, "addr", "add", h.Addr + "/24", "dev", "eth0"}
}
