package wanemu

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"time"
)

// ErrInvalid reports a configuration or request that cannot work.
var ErrInvalid = errors.New("wanemu: invalid argument")

// MaxSites bounds the number of sites (and so the number of queues).
const MaxSites = 64

// DefaultQueueBytes is the queue bound per pair of sites where Config.QueueBytes is 0: more
// than 100 Mbit/s for 50 ms in flight, a few MiB of memory per pair at most.
const DefaultQueueBytes = 4 << 20

// DefaultTotalBytes bounds the bytes held over all pairs where Config.TotalBytes is 0.
const DefaultTotalBytes = 64 << 20

// Site is one site's link to the router.
type Site struct {
	// Name is the site's name (s1, s2, ...), in logs and statistics.
	Name string `json:"name"`
	// Prefixes are the addresses that belong to the site: its hosts' prefix and its
	// gateway's wide-area address.
	Prefixes []netip.Prefix `json:"prefixes"`
	// Delay is the one-way delay of the site's link (see the package doc).
	Delay time.Duration `json:"delay"`
	// Loss is the share of packets the link drops, 0 to 1.
	Loss float64 `json:"loss"`
	// Down drops every packet between the site and the others.
	Down bool `json:"down"`
}

// Config is what the emulator is started with.
type Config struct {
	// Device is the TUN device's name (it exists; the cluster made it).
	Device string `json:"device"`
	// Control is the path of the unix socket that Set and Stats talk to; none when empty.
	Control string `json:"control"`
	// QueueBytes bounds the bytes held per pair of sites (default DefaultQueueBytes),
	// TotalBytes those held over all pairs (default DefaultTotalBytes).
	QueueBytes int    `json:"queue_bytes"`
	TotalBytes int    `json:"total_bytes"`
	Sites      []Site `json:"sites"`
}

// maxDelay bounds a link's delay: a minute of held packets is no wide-area link.
const maxDelay = 10 * time.Second

// validate checks the configuration.
func (c *Config) validate() error {
	if len(c.Sites) < 1 || len(c.Sites) > MaxSites {
		return fmt.Errorf("%w: %d sites (1 to %d)", ErrInvalid, len(c.Sites), MaxSites)
	}
	if c.QueueBytes < 0 || c.TotalBytes < 0 {
		return fmt.Errorf("%w: queue bounds %d and %d bytes", ErrInvalid, c.QueueBytes, c.TotalBytes)
	}
	for i, s := range c.Sites {
		if err := checkLink(s.Delay, s.Loss); err != nil {
			return fmt.Errorf("site %d (%s): %w", i+1, s.Name, err)
		}
		for _, p := range s.Prefixes {
			if !p.IsValid() || !p.Addr().Is4() {
				return fmt.Errorf("%w: site %d (%s): prefix %v is not IPv4", ErrInvalid, i+1, s.Name, p)
			}
		}
	}
	return nil
}

// checkLink checks a delay and a loss.
func checkLink(delay time.Duration, loss float64) error {
	if delay < 0 || delay > maxDelay {
		return fmt.Errorf("%w: delay %v (0 to %v)", ErrInvalid, delay, maxDelay)
	}
	if !(loss >= 0 && loss <= 1) {
		return fmt.Errorf("%w: loss %v (0 to 1)", ErrInvalid, loss)
	}
	return nil
}

// LoadConfig reads a configuration written as JSON.
func LoadConfig(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("wanemu: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("wanemu: %s: %w", path, err)
	}
	return c, c.validate()
}
