package addrlist

import (
	"net"
	"strconv"
)

// Choose is the rule for what a member listening on all interfaces at port publishes:
// first local, the address this host used to reach the registry (so the best guess of
// how the others reach it), then its other addresses from ifaces, IPv4 before IPv6,
// leaving out loopback, link-local and unspecified ones. When local is loopback the
// registry is on this host and so, as far as anyone can tell, is the pool: loopback
// alone is right. With no local address (nil) the list is the interface addresses, or
// loopback when there are none. The list stays within MaxEntries and MaxLength.
func Choose(local net.IP, port int, ifaces []net.IP) []string {
	p := strconv.Itoa(port)
	if local != nil && local.IsLoopback() {
		return []string{net.JoinHostPort(canon(local).String(), p)}
	}
	var out []string
	seen := map[string]bool{}
	size := 0
	add := func(ip net.IP) {
		a := net.JoinHostPort(canon(ip).String(), p)
		if seen[a] || len(out) == MaxEntries || size+len(a)+1 > MaxLength {
			return
		}
		seen[a] = true
		size += len(a) + 1
		out = append(out, a)
	}
	if local != nil && !local.IsUnspecified() {
		add(local)
	}
	for _, v4 := range []bool{true, false} {
		for _, ip := range ifaces {
			if usable(ip) && (ip.To4() != nil) == v4 {
				add(ip)
			}
		}
	}
	if len(out) == 0 {
		return []string{net.JoinHostPort("127.0.0.1", p)}
	}
	return out
}

// usable: an address another host may reach this one by.
func usable(ip net.IP) bool {
	return ip != nil && !ip.IsLoopback() && !ip.IsUnspecified() && !ip.IsLinkLocalUnicast() &&
		!ip.IsLinkLocalMulticast() && !ip.IsMulticast()
}

// canon writes an IPv4-mapped address as IPv4.
func canon(ip net.IP) net.IP {
	if v4 := ip.To4(); v4 != nil {
		return v4
	}
	return ip
}

// UpAddrs returns the IP addresses of this host's interfaces that are up.
func UpAddrs() ([]net.IP, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var ips []net.IP
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				ips = append(ips, n.IP)
			}
		}
	}
	return ips, nil
}

// IPOf returns the IP of a TCP or UDP address (nil for any other).
func IPOf(a net.Addr) net.IP {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP
	case *net.UDPAddr:
		return a.IP
	}
	return nil
}

// IsWildcard reports whether addr is host:port with an unspecified host (0.0.0.0, ::, or
// empty): what a listener on all interfaces reports, which is no address to dial.
func IsWildcard(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}
