package registry

import (
	"testing"
	"time"
)

// The death timeout and the unjoined places per source settle the same
// whatever the order of the options: the timeout is at least one heartbeat
// interval (0 is the default), a source's share at most the whole.
func TestDeathTimeoutAndShareSettle(t *testing.T) {
	for _, tc := range []struct {
		opts        []ServerOption
		death       time.Duration
		perSource   int
		description string
	}{
		{nil, DefaultDeathTimeout, DefaultMaxUnjoinedPerSource, "defaults"},
		{[]ServerOption{WithDeathTimeout(0)}, DefaultDeathTimeout, DefaultMaxUnjoinedPerSource, "zero is the default"},
		{[]ServerOption{WithDeathTimeout(time.Second), WithHeartbeatInterval(5 * time.Second)}, 5 * time.Second,
			DefaultMaxUnjoinedPerSource, "raised to the heartbeat interval"},
		{[]ServerOption{WithHeartbeatInterval(5 * time.Second), WithDeathTimeout(time.Second)}, 5 * time.Second,
			DefaultMaxUnjoinedPerSource, "in either order"},
		{[]ServerOption{WithMaxUnjoinedConnections(8)}, DefaultDeathTimeout, 2, "a quarter of the limit"},
		{[]ServerOption{WithMaxUnjoinedPerSource(50), WithMaxUnjoinedConnections(8)}, DefaultDeathTimeout, 8, "at most the limit"},
		{[]ServerOption{WithMaxUnjoinedConnections(1)}, DefaultDeathTimeout, 1, "at least one"},
	} {
		s := NewServer(tc.opts...)
		if s.DeathTimeout() != tc.death || s.cfg.maxUnjoinedPerSource != tc.perSource {
			t.Errorf("%s: death timeout %v, per source %d; want %v, %d", tc.description,
				s.DeathTimeout(), s.cfg.maxUnjoinedPerSource, tc.death, tc.perSource)
		}
	}
}
