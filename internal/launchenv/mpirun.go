package launchenv

import (
	"fmt"
	"net"
	"strings"
)

// parseHNPURI returns the IP addresses in Open MPI's URI of mpirun (the "HNP"), such as
// "1262092288.0;tcp://192.0.2.2,10.0.0.1:54253;tcp6://[fd00::2]:41955": IPv4 first, in
// the order given.
func parseHNPURI(uri string) ([]string, error) {
	_, rest, ok := strings.Cut(uri, ";")
	if !ok {
		return nil, fmt.Errorf("%q has no addresses (want JOB.VPID;tcp://ADDR,...:PORT)", uri)
	}
	var hosts []string
	for part := range strings.SplitSeq(rest, ";") {
		scheme, body, ok := strings.Cut(part, "://")
		if !ok || (scheme != "tcp" && scheme != "tcp6") {
			continue // another transport: nothing to dial
		}
		i := strings.LastIndexByte(body, ':')
		if i < 0 {
			return nil, fmt.Errorf("%q: %q has no port", uri, part)
		}
		for a := range strings.SplitSeq(body[:i], ",") {
			a = strings.TrimSuffix(strings.TrimPrefix(a, "["), "]")
			ip := net.ParseIP(a)
			if ip == nil {
				return nil, fmt.Errorf("%q: %q is not an IP address", uri, a)
			}
			hosts = append(hosts, ip.String())
		}
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("%q names no TCP address", uri)
	}
	return hosts, nil
}

// OrderHosts puts first the hosts on a subnet of one of local (this machine's
// interface networks), loopback addresses last, keeping the given order otherwise: the
// first is the one most likely reachable from here.
func OrderHosts(hosts []string, local []net.Addr) []string {
	rank := func(h string) int {
		ip := net.ParseIP(h)
		switch {
		case ip == nil:
			return 1
		case ip.IsLoopback():
			return 2
		}
		for _, a := range local {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.Contains(ip) {
				return 0
			}
		}
		return 1
	}
	out := make([]string, 0, len(hosts))
	for r := range 3 {
		for _, h := range hosts {
			if rank(h) == r {
				out = append(out, h)
			}
		}
	}
	return out
}
