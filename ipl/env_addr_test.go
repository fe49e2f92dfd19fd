package ipl

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// IBIS_HUB refuses an empty item, as IBIS_REGISTRY does, naming the variable and the
// item, rather than dropping it; blanks around the items are still dropped, and an
// unset or blank variable is no hub.
func TestEnvHubChecksItems(t *testing.T) {
	for _, c := range []struct{ hub, want string }{
		{",", "item 1 is empty"},
		{"a:1,,b:2", "item 2 is empty"},
		{"a:1,", "item 2 is empty"},
		{":7700", "has no host"},
	} {
		cfg := &Config{}
		err := cfg.ApplyEnvironment(lookup(EnvHub + "=" + c.hub))
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), EnvHub) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%q: hubs %q, error %v; want ErrInvalidArgument naming %s and saying %q", EnvHub, c.hub, cfg.Hubs, err, EnvHub, c.want)
		}
	}
	for _, c := range []struct {
		hub  string
		want []string
	}{
		{"", nil},
		{"  ", nil},
		{" a:1 , b:2 ", []string{"a:1", "b:2"}},
	} {
		cfg := &Config{}
		if err := cfg.ApplyEnvironment(lookup(EnvHub + "=" + c.hub)); err != nil || !slices.Equal(cfg.Hubs, c.want) {
			t.Errorf("%s=%q: hubs %q, error %v; want %q", EnvHub, c.hub, cfg.Hubs, err, c.want)
		}
	}
}

// IBIS_HOST (and WithListenHost, which -host sets) is a host name or an IP address: a
// value with a port is refused with an error that names where it came from and says a
// port is not allowed, instead of failing later as a host lookup of the whole value.
// IPv6 addresses, with a zone or not, and the wildcards still pass.
func TestListenHostWithoutPort(t *testing.T) {
	for _, c := range []struct{ host, want string }{
		{"127.0.0.1:80", "a port is not allowed"},
		{"localhost:80", "a port is not allowed"},
		{":80", "a port is not allowed"},
		{"[::1]:80", "a port is not allowed"},
		{"[::1]", "without brackets"},
		{"a:b:c", "want a host name or IP address"},
	} {
		cfg := &Config{}
		err := cfg.ApplyEnvironment(lookup(EnvHost + "=" + c.host))
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), EnvHost) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%q: %v; want ErrInvalidArgument naming %s and saying %q", EnvHost, c.host, err, EnvHost, c.want)
		}
		cfg = &Config{}
		WithListenHost(c.host)(cfg)
		err = cfg.ApplyEnvironment(lookup())
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "WithListenHost") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("WithListenHost(%q): %v; want ErrInvalidArgument naming WithListenHost and saying %q", c.host, err, c.want)
		}
	}
	for _, host := range []string{"", "127.0.0.1", "localhost", "node-1.example.org", "0.0.0.0", "::", "::1", "fe80::1%eth0",
		"::ffff:10.0.0.1", "2001:db8::8:800:200c:417a"} {
		cfg := &Config{}
		if err := cfg.ApplyEnvironment(lookup(EnvHost + "=" + host)); err != nil || cfg.ListenHost != host {
			t.Errorf("%s=%q: listen host %q, error %v; want it taken as it is", EnvHost, host, cfg.ListenHost, err)
		}
		cfg = &Config{}
		WithListenHost(host)(cfg)
		if err := cfg.ApplyEnvironment(lookup()); err != nil || cfg.ListenHost != host {
			t.Errorf("WithListenHost(%q): listen host %q, error %v; want it taken as it is", host, cfg.ListenHost, err)
		}
	}
}
