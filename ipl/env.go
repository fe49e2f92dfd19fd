package ipl

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ibisgo/ibis/internal/hub"
)

// Environment variables read by New for settings the program's options left unset.
// The launcher (cmd/ibis-run) sets the first four for every process it starts.
const (
	EnvRegistry  = "IBIS_REGISTRY"  // registry host:port, or a comma-separated list of front ends
	EnvPool      = "IBIS_POOL"      // pool name
	EnvPoolSize  = "IBIS_POOL_SIZE" // closed-world pool size
	EnvImpl      = "IBIS_IMPL"      // implementation name
	EnvHost      = "IBIS_HOST"      // pins the host/IP (no port) to listen on and publish (WithListenHost)
	EnvTag       = "IBIS_TAG"       // instance tag
	EnvHub       = "IBIS_HUB"       // relay hubs, comma-separated host:port (WithHubs)
	EnvHeartbeat = "IBIS_HEARTBEAT" // embedded registry heartbeat interval (Go duration)
	// EnvDeathTimeout: how long an embedded registry lets a member be silent before it
	// declares it dead (a Go duration).
	EnvDeathTimeout = "IBIS_DEATH_TIMEOUT"
	EnvMaxMsg       = "IBIS_MAX_MESSAGE_SIZE"
	// EnvMessageTimeout bounds how long a message may wait for its sender's next bytes
	// (a Go duration; "off" disables it).
	EnvMessageTimeout = "IBIS_MESSAGE_TIMEOUT"
	// EnvPoolSecret and EnvPoolSecretFile give the pool secret (WithPoolSecret), the
	// second in a file, which keeps it out of process listings.
	EnvPoolSecret     = "IBIS_POOL_SECRET"
	EnvPoolSecretFile = "IBIS_POOL_SECRET_FILE"
	// EnvTLSCert, EnvTLSKey and EnvTLSCA name the PEM files of WithTLS.
	EnvTLSCert = "IBIS_TLS_CERT"
	EnvTLSKey  = "IBIS_TLS_KEY"
	EnvTLSCA   = "IBIS_TLS_CA"
)

// ApplyEnvironment fills the fields of c that are still zero from the environment
// (look is os.LookupEnv in production, a map in tests). Options win over environment,
// so a program that fixes a setting in code keeps it; flags become options. The IBIS_*
// variables win over a launcher's: what they leave unset comes from srun's or mpirun's
// variables (the pool size, a pool name, the registry that rank 0 serves; see
// LaunchRank and docs/CLUSTERS.md), except for mp, which makes its pool itself.
// A malformed listen host or hub list is refused here, whether an option or the
// environment gave it, with an error wrapping ErrInvalidArgument that names where it
// came from.
func (c *Config) ApplyEnvironment(look func(string) (string, bool)) error {
	if look == nil {
		look = os.LookupEnv
	}
	get := func(k string) string {
		v, _ := look(k)
		return strings.TrimSpace(v)
	}
	c.applyPropertyEnvs(get)
	if c.Registry == "" {
		c.Registry = get(EnvRegistry)
	}
	if c.Pool == "" {
		c.Pool = get(EnvPool)
	}
	if c.Implementation == "" {
		c.Implementation = get(EnvImpl)
	}
	if c.ListenHost != "" {
		if err := checkListenHost(c.ListenHost); err != nil {
			return fmt.Errorf("%w: listen host %q (WithListenHost, -host): %w", ErrInvalidArgument, c.ListenHost, err)
		}
	} else if c.ListenHost = get(EnvHost); c.ListenHost != "" {
		if err := checkListenHost(c.ListenHost); err != nil {
			return fmt.Errorf("%w: %s=%q: %w", ErrInvalidArgument, EnvHost, c.ListenHost, err)
		}
	}
	if c.Tag == "" {
		c.Tag = get(EnvTag)
	}
	if c.Hubs == nil {
		hubs, err := hub.ParseHubs(get(EnvHub))
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrInvalidArgument, EnvHub, err)
		}
		c.Hubs = hubs
	}
	if c.PoolSize == 0 {
		if v := get(EnvPoolSize); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("ipl: %s=%q: want a non-negative integer", EnvPoolSize, v)
			}
			c.PoolSize = n
		}
	}
	if c.HeartbeatInterval == 0 {
		if v := get(EnvHeartbeat); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("ipl: %s=%q: want a positive duration such as 500ms", EnvHeartbeat, v)
			}
			c.HeartbeatInterval = d
		}
	}
	if c.DeathTimeout == 0 {
		if v := get(EnvDeathTimeout); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("ipl: %s=%q: want a positive duration such as 30s", EnvDeathTimeout, v)
			}
			c.DeathTimeout = d
		}
	}
	if c.MaxMessageSize == 0 {
		if v := get(EnvMaxMsg); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return fmt.Errorf("ipl: %s=%q: want a positive byte count", EnvMaxMsg, v)
			}
			c.MaxMessageSize = n
		}
	}
	if c.PoolSecret == nil && c.PoolSecretFile == "" {
		if v, ok := look(EnvPoolSecret); ok && v != "" {
			c.PoolSecret = []byte(v)
		}
		c.PoolSecretFile = get(EnvPoolSecretFile)
	}
	if c.TLSCert == "" && c.TLSKey == "" && c.TLSCA == "" {
		c.TLSCert, c.TLSKey, c.TLSCA = get(EnvTLSCert), get(EnvTLSKey), get(EnvTLSCA)
	}
	if c.MessageTimeout == 0 {
		if v := get(EnvMessageTimeout); v != "" {
			if v == "off" {
				c.MessageTimeout = NoMessageTimeout
			} else {
				d, err := time.ParseDuration(v)
				if err != nil || d <= 0 {
					return fmt.Errorf("ipl: %s=%q: want a positive duration such as 30s, or off", EnvMessageTimeout, v)
				}
				c.MessageTimeout = d
			}
		}
	}
	return c.applyLauncher(look)
}

// checkListenHost refuses a listen host (WithListenHost, IBIS_HOST) that is not a host
// name or an IP address: one with a port, which the implementation would otherwise try
// to look up as a host name (the system picks the ports), or an IPv6 address in
// brackets. IPv6 addresses are written bare, with a zone where needed ("::1",
// "fe80::1%eth0"). Only the form is checked: a name that does not resolve fails when the
// implementation listens.
func checkListenHost(h string) error {
	if _, err := netip.ParseAddr(h); err == nil {
		return nil // an IP address; IPv6 with its zone, if any
	}
	host, _, err := net.SplitHostPort(h)
	switch {
	case err == nil && host == "":
		return errors.New("a port is not allowed here: give a host name or IP address alone (the system picks the ports)")
	case err == nil:
		return fmt.Errorf("a port is not allowed here: give the host or IP address alone (%s; the system picks the ports)", host)
	case strings.ContainsAny(h, "[]"):
		if ip, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
			return fmt.Errorf("write an IPv6 address without brackets (%s)", ip)
		}
		return errors.New("want a host name or IP address, without brackets")
	case strings.Contains(h, ":"):
		return errors.New("want a host name or IP address (a colon belongs only in an IPv6 address)")
	}
	return nil
}

func (c *Config) applyDefaults() {
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.MaxMessageSize <= 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
	}
	if c.MessageTimeout == 0 {
		c.MessageTimeout = DefaultMessageTimeout
	}
	if c.Pool == "" {
		c.Pool = "default"
	}
}
