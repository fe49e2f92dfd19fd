package sockets

import (
	"testing"

	"github.com/ibisgo/ibis/ipl"
)

func TestListenHost(t *testing.T) {
	for _, c := range []struct {
		cfg  ipl.Config
		want string
	}{
		{ipl.Config{}, "127.0.0.1"},                                             // embedded registry, a pool of one
		{ipl.Config{ListenHost: "10.0.0.5"}, "10.0.0.5"},                        // pinned
		{ipl.Config{ListenHost: "0.0.0.0", Registry: "127.0.0.1:1"}, "0.0.0.0"}, // pinned wildcard
		{ipl.Config{Registry: "127.0.0.1:8888"}, "127.0.0.1"},
		{ipl.Config{Registry: "localhost:8888"}, "127.0.0.1"},
		{ipl.Config{Registry: "[::1]:8888"}, "::1"},
		{ipl.Config{Registry: "10.77.0.1:8888"}, ""},
		{ipl.Config{Registry: "node01:8888"}, ""},
		{ipl.Config{Registry: "node01:8888", ServeRegistry: ":20000"}, ""},
		{ipl.Config{ServeRegistry: ":20000"}, ""},
		{ipl.Config{Registry: "garbage"}, ""},
		{ipl.Config{Registry: "127.0.0.1:8888, localhost:8889"}, "127.0.0.1"}, // front ends on loopback
		{ipl.Config{Registry: "127.0.0.1:8888,[::1]:8889"}, ""},               // two loopbacks: no one host
		{ipl.Config{Registry: "127.0.0.1:8888,node01:8888"}, ""},
		{ipl.Config{Registry: "127.0.0.1:8888,,127.0.0.1:8889"}, ""}, // not a list Join takes
	} {
		if got := ListenHost(&c.cfg); got != c.want {
			t.Errorf("ListenHost(registry %q, host %q, serve %q) = %q, want %q",
				c.cfg.Registry, c.cfg.ListenHost, c.cfg.ServeRegistry, got, c.want)
		}
	}
}
