package registry

import "testing"

// MuteProxy lends the internal tests' proxy (client_multi_internal_test.go) to the
// external ones.
type MuteProxy = muteProxy

// StartMuteProxy starts a proxy to target for the length of the test.
func StartMuteProxy(t *testing.T, target string) *MuteProxy { return startMuteProxy(t, target) }

// Addr is the proxy's address.
func (p *muteProxy) Addr() string { return p.addr() }

// Hold drops what the member writes from now on (hold).
func (p *muteProxy) Hold() { p.hold() }
