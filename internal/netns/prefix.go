package netns

import "fmt"

// maxPrefix bounds a prefix so that every namespace name stays a short file name.
const maxPrefix = 40

// WithPrefix names the network's namespaces prefix-sw and prefix-hI (I from 0) instead of
// a random ibis-XXXXXXXX, so that a caller can find them again (after a crash, say). The
// prefix is lower-case letters, digits and '-', at most 40 characters, and must be unique
// on the machine: New fails where a namespace of that name exists.
func WithPrefix(prefix string) Option { return func(c *config) { c.prefix = prefix } }

// validPrefix checks a WithPrefix value; "" (a random prefix) is valid.
func validPrefix(p string) error {
	if len(p) > maxPrefix {
		return fmt.Errorf("%w: prefix %q is longer than %d characters", ErrInvalid, p, maxPrefix)
	}
	for _, r := range p {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return fmt.Errorf("%w: prefix %q: only a-z, 0-9 and '-'", ErrInvalid, p)
		}
	}
	return nil
}

// Prefix returns the start of every namespace name of the network.
func (nw *Network) Prefix() string { return nw.prefix }

// SwitchNamespace returns the name of the namespace that holds the network's bridge.
func (nw *Network) SwitchNamespace() string { return nw.switchNS }

// SwitchNamespace returns the name of the namespace that holds the bridge the host's cable
// plugs into.
func (h *Host) SwitchNamespace() string { return h.sw }

// Site returns the host's site of a Grid (1 is the first); 0 for a Network's host.
func (h *Host) Site() int { return h.site }

// SwitchPort returns the name of the host's cable end at the switch, in SwitchNamespace: the
// interface LinkDown takes down.
func (h *Host) SwitchPort() string { return h.port }
