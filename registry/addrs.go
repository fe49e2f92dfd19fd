package registry

import (
	"crypto/tls"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// MaxRegistryAddrs bounds how many registry front ends one address list may
// name.
const MaxRegistryAddrs = 64

// ParseAddrs splits a registry address as Join takes it (one host:port, or
// a comma-separated list of the host:port of several front ends that serve
// the same pools, such as "a:8888,b:8888") into its addresses, in order.
// Spaces around the commas are dropped. An empty item, an item that is not
// host:port with a port from 1 to 65535, the same address twice, or more
// than MaxRegistryAddrs addresses give an error wrapping ErrInvalid that
// names the item. An empty host (":8888") is this host, as for net.Dial.
func ParseAddrs(list string) ([]string, error) {
	items := strings.Split(list, ",")
	if len(items) > MaxRegistryAddrs {
		return nil, fmt.Errorf("%w: registry address list of %d front ends exceeds the maximum of %d",
			ErrInvalid, len(items), MaxRegistryAddrs)
	}
	addrs := make([]string, 0, len(items))
	seen := make(map[string]int, len(items))
	for i, item := range items {
		addr := strings.TrimSpace(item)
		if addr == "" {
			if len(items) == 1 {
				return nil, fmt.Errorf("%w: empty registry address", ErrInvalid)
			}
			return nil, fmt.Errorf("%w: registry address list %q: item %d is empty", ErrInvalid, list, i+1)
		}
		key, err := addrKey(addr)
		if err != nil {
			return nil, fmt.Errorf("%w: registry address %q: %w", ErrInvalid, addr, err)
		}
		if j, dup := seen[key]; dup {
			return nil, fmt.Errorf("%w: registry address list %q names %s twice (items %d and %d)",
				ErrInvalid, list, addr, j+1, i+1)
		}
		seen[key] = i
		addrs = append(addrs, addr)
	}
	return addrs, nil
}

// addrKey checks that addr is host:port with a numeric port from 1 to
// 65535 and returns it in a form in which two spellings of the same
// address (host names differ only in case) are equal.
func addrKey(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("want host:port: %w", err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("port %q: want a number from 1 to 65535", port)
	}
	return net.JoinHostPort(strings.ToLower(host), port), nil
}

// clientsStarted counts the clients of this process that spread over
// several front ends (see firstAddr).
var clientsStarted atomic.Uint64

// firstAddr returns the index of the front end a client tries first among
// n: a stable spread, so that the members of a pool share the front ends
// rather than all loading the first one (and all moving at once when it
// dies). It is the process id, hashed, plus the number of clients this
// process started before, so that processes spread and so do the clients
// within one process. The others are tried in list order after it.
func firstAddr(n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(strconv.Itoa(os.Getpid())))
	return int((h.Sum64() + clientsStarted.Add(1) - 1) % uint64(n))
}

// endpoint is one registry front end of a client: its address and the TLS
// configuration for it (nil: plain TCP), whose server name is the host of
// that address unless the program set one.
type endpoint struct {
	addr string
	tls  *tls.Config
}
