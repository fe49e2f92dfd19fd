// Package addrlist is the format of the address a member publishes in its registry
// identifier, and the rule that chooses what goes in it. A member that listens on all
// its interfaces can be reached by several addresses; it publishes them in one string,
// best first, and a connecting side tries them in that order.
//
// The format is a comma-separated list of host:port entries, an IPv6 host in brackets
// ("10.0.0.5:4001,[2001:db8::5]:4001"): a single host:port, what every member published
// before, is a list of one. The registry treats the string as opaque bytes; Parse reads
// what another process published and so refuses anything out of shape.
package addrlist

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Bounds of a list: far above what a host has, far below the registry's string limit.
const (
	MaxEntries = 16
	MaxLength  = 1024 // bytes of the encoded list
)

// ErrInvalid reports a list that is not in the format.
var ErrInvalid = errors.New("addrlist: invalid address list")

// Encode joins host:port entries into one published address; each entry must be one
// Parse accepts, and the whole within the bounds.
func Encode(addrs []string) (string, error) {
	if len(addrs) == 0 {
		return "", fmt.Errorf("%w: no address", ErrInvalid)
	}
	if len(addrs) > MaxEntries {
		return "", fmt.Errorf("%w: %d addresses, at most %d", ErrInvalid, len(addrs), MaxEntries)
	}
	for _, a := range addrs {
		if err := checkEntry(a); err != nil {
			return "", err
		}
	}
	s := strings.Join(addrs, ",")
	if len(s) > MaxLength {
		return "", fmt.Errorf("%w: %d bytes, at most %d", ErrInvalid, len(s), MaxLength)
	}
	return s, nil
}

// Parse splits a published address into its host:port entries, in order. It refuses an
// empty list, an entry that is not host:port with a port from 1 to 65535, and a list
// beyond the bounds.
func Parse(s string) ([]string, error) {
	if len(s) > MaxLength {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrInvalid, len(s), MaxLength)
	}
	if s == "" {
		return nil, fmt.Errorf("%w: empty", ErrInvalid)
	}
	parts := strings.Split(s, ",")
	if len(parts) > MaxEntries {
		return nil, fmt.Errorf("%w: %d addresses, at most %d", ErrInvalid, len(parts), MaxEntries)
	}
	for _, p := range parts {
		if err := checkEntry(p); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// checkEntry accepts host:port with a non-empty host free of commas, brackets and spaces
// and a decimal port from 1 to 65535.
func checkEntry(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return fmt.Errorf("%w: %q: %w", ErrInvalid, a, err)
	}
	if host == "" || strings.ContainsAny(host, ",[] \t\r\n") {
		return fmt.Errorf("%w: %q: bad host", ErrInvalid, a)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
		return fmt.Errorf("%w: %q: bad port", ErrInvalid, a)
	}
	return nil
}

// HasLoopback reports whether any entry of a published address is a loopback IP or
// "localhost". It reads leniently: entries out of shape are skipped, never an error, so
// that the registry can look at what members publish without judging it.
func HasLoopback(s string) bool {
	if len(s) > MaxLength {
		s = s[:MaxLength]
	}
	for p := range strings.SplitSeq(s, ",") {
		host, _, err := net.SplitHostPort(p)
		if err != nil {
			continue
		}
		if IsLoopback(host) {
			return true
		}
	}
	return false
}

// IsLoopback reports whether host is a loopback IP or "localhost".
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
