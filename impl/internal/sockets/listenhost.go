package sockets

import (
	"net"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// ListenHost is where tcp and nio listen: the host cfg pins (IBIS_HOST), else loopback
// when the pool's registry is on loopback (every front end of a list on the same
// loopback address, or embedded on loopback for a pool of this process), since such a
// pool is on this host alone and its data ports need not be open to the network; else
// "" (every interface, and core publishes the address list).
func ListenHost(cfg *ipl.Config) string {
	if cfg.ListenHost != "" || cfg.ServeRegistry != "" {
		return cfg.ListenHost
	}
	if cfg.Registry == "" {
		return "127.0.0.1"
	}
	addrs, err := registry.ParseAddrs(cfg.Registry)
	if err != nil {
		return ""
	}
	host := ""
	for _, a := range addrs {
		h := loopbackHost(a)
		if h == "" || host != "" && h != host {
			return ""
		}
		host = h
	}
	return host
}

// loopbackHost returns the loopback IP of addr (host:port) when its host is loopback,
// else "".
func loopbackHost(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if host == "localhost" {
		return "127.0.0.1"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return ip.String()
	}
	return ""
}
