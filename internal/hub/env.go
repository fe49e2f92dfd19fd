package hub

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// EnvHubs names the environment variable that tells a member its hubs:
// host:port[,host:port...].
const EnvHubs = "IBIS_HUB"

// MaxHubs bounds the hubs one list may name.
const MaxHubs = 16

// ParseHubs parses a list of hubs as IBIS_HUB gives it: host:port entries separated by
// commas (blanks around them ignored; an empty or blank list is no hub). An empty
// entry (",", "a:1,,b:2") is an error, as in a registry address list, rather than
// dropped: it is a typo more often than not. Each entry needs a host and a port number
// from 1 to 65535; a hub named twice is an error, so is a list of more than MaxHubs.
// Errors wrap ErrBadHubList and name the entry.
func ParseHubs(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var hubs []string
	seen := map[string]bool{}
	for i, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			return nil, fmt.Errorf("%w %q: item %d is empty", ErrBadHubList, list, i+1)
		}
		host, port, err := net.SplitHostPort(e)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %q is not host:port: %w", ErrBadHubList, list, e, err)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("%w %q: %q has no port number from 1 to 65535", ErrBadHubList, list, e)
		}
		if host == "" {
			return nil, fmt.Errorf("%w %q: %q has no host: name the hub's host (this address is published to the pool's members)", ErrBadHubList, list, e)
		}
		if len(e) > maxAddr {
			return nil, fmt.Errorf("%w %q: %q is %d bytes long, at most %d", ErrBadHubList, list, e, len(e), maxAddr)
		}
		if seen[e] {
			return nil, fmt.Errorf("%w %q: %q is named twice", ErrBadHubList, list, e)
		}
		seen[e] = true
		hubs = append(hubs, e)
	}
	if len(hubs) > MaxHubs {
		return nil, fmt.Errorf("%w %q: %d hubs, at most %d", ErrBadHubList, list, len(hubs), MaxHubs)
	}
	return hubs, nil
}
