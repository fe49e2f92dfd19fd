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
// commas (blanks around them ignored; an empty list is no hub). Each port must be a
// number from 1 to 65535; a hub named twice is an error, so is a list of more than
// MaxHubs.
func ParseHubs(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var hubs []string
	seen := map[string]bool{}
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		host, port, err := net.SplitHostPort(e)
		if err != nil {
			return nil, fmt.Errorf("hub list %q: %q is not host:port: %w", list, e, err)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("hub list %q: %q has no port number from 1 to 65535", list, e)
		}
		if host == "" || len(e) > maxAddr {
			return nil, fmt.Errorf("hub list %q: %q needs a host of at most %d bytes", list, e, maxAddr)
		}
		if seen[e] {
			return nil, fmt.Errorf("hub list %q: %q is named twice", list, e)
		}
		seen[e] = true
		hubs = append(hubs, e)
	}
	if len(hubs) > MaxHubs {
		return nil, fmt.Errorf("hub list %q: %d hubs, at most %d", list, len(hubs), MaxHubs)
	}
	return hubs, nil
}
