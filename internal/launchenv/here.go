package launchenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// Host is what ServesHere needs to know about this machine; ThisHost gives the real one.
type Host struct {
	// Name is the host name (os.Hostname).
	Name string
	// Addrs are the interface addresses (net.InterfaceAddrs).
	Addrs []net.Addr
	// Lookup resolves a host name to addresses (nil: none resolve).
	Lookup func(ctx context.Context, host string) ([]string, error)
}

// lookupTimeout bounds the name lookup of ServesHere.
const lookupTimeout = 10 * time.Second

// ServesHere checks that this process (rank 0) runs where the other ranks look for the
// registry: under srun on the step's first node (SLURMD_NODENAME, else the host name,
// else the node's addresses), under mpirun on mpirun's own host (its local daemon is
// mpirun). The error says what to do instead.
func (l Launch) ServesHere(h Host) error {
	switch l.Launcher {
	case Srun:
		first := l.RegistryHosts[0]
		if l.nodeName != "" {
			if sameHost(l.nodeName, first) {
				return nil
			}
			return fmt.Errorf("%w: rank 0 runs on %s (SLURMD_NODENAME) but the step's first node is %s, where the other ranks look for the registry; use srun's default block distribution, or run ibis-registry somewhere and set IBIS_REGISTRY=HOST:PORT for every rank",
				ErrRankZeroElsewhere, l.nodeName, first)
		}
		if first == "localhost" || (h.Name != "" && sameHost(h.Name, first)) {
			return nil
		}
		if h.Lookup != nil {
			ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
			ips, _ := h.Lookup(ctx, first)
			cancel()
			if anyLocal(ips, h.Addrs) {
				return nil
			}
		}
		return fmt.Errorf("%w: rank 0 runs on %s, which is not the step's first node %s, where the other ranks look for the registry; use srun's default block distribution, or run ibis-registry somewhere and set IBIS_REGISTRY=HOST:PORT for every rank",
			ErrRankZeroElsewhere, h.Name, first)
	case Mpirun:
		if l.localDaemonURI != "" {
			if l.localDaemonURI == l.hnpURI {
				return nil
			}
		} else if anyLocal(l.RegistryHosts, h.Addrs) {
			return nil
		}
		return fmt.Errorf("%w: rank 0 does not run on mpirun's host (%s), where the other ranks look for the registry; map rank 0 there (mpirun's default), or run ibis-registry somewhere and set IBIS_REGISTRY=HOST:PORT (mpirun -x IBIS_REGISTRY)",
			ErrRankZeroElsewhere, strings.Join(l.RegistryHosts, ", "))
	}
	return nil
}

// sameHost compares host names without case and without the domain of the longer one.
func sameHost(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	short := func(s string) string {
		if net.ParseIP(s) != nil {
			return s
		}
		s, _, _ = strings.Cut(s, ".")
		return s
	}
	return strings.EqualFold(short(a), short(b))
}

// anyLocal reports whether one of ips is an address of this machine.
func anyLocal(ips []string, local []net.Addr) bool {
	for _, s := range ips {
		ip := net.ParseIP(s)
		if ip == nil {
			continue
		}
		for _, a := range local {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return true
			}
		}
	}
	return false
}

// ThisHost describes the machine this process runs on.
func ThisHost() Host {
	name, _ := os.Hostname()
	addrs, _ := net.InterfaceAddrs()
	return Host{Name: name, Addrs: addrs, Lookup: net.DefaultResolver.LookupHost}
}
