package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// etcdScheme begins a -store value that names an etcd cluster.
const etcdScheme = "etcd://"

// parseStore reads the -store flag: "memory" (nil endpoints) or
// etcd://host:port[,host:port...] (the endpoints).
func parseStore(v string) ([]string, error) {
	if v == "memory" {
		return nil, nil
	}
	rest, ok := strings.CutPrefix(v, etcdScheme)
	if !ok {
		return nil, fmt.Errorf("-store %q: want memory or %sHOST:PORT[,HOST:PORT...]", v, etcdScheme)
	}
	var eps []string
	for _, ep := range strings.Split(rest, ",") {
		ep = strings.TrimSpace(ep)
		host, port, err := net.SplitHostPort(ep)
		if err != nil || host == "" {
			return nil, fmt.Errorf("-store %q: etcd endpoint %q is not HOST:PORT", v, ep)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("-store %q: etcd endpoint %q has no port number (1-65535)", v, ep)
		}
		eps = append(eps, ep)
	}
	return eps, nil
}
