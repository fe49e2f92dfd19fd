package hub

import (
	"errors"
	"fmt"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// Errors of the hub's clients and server. Each error returned wraps one of them (and,
// where the pool check failed, poolauth.ErrUnauthenticated too) and says which hub,
// which pool and why.
var (
	// ErrNoSuchMember: the key is not registered at that hub (in that pool).
	ErrNoSuchMember = errors.New("hub: no such member")
	// ErrRefused: the hub refused the connection: the pool check failed, or a limit.
	ErrRefused = errors.New("hub: refused")
	// ErrUnreachable: the hub, or the hub the target registered at, could not be
	// reached, or a member's control connection to its hub was lost.
	ErrUnreachable = errors.New("hub: unreachable")
	// ErrTimeout: the target did not open its side within the hub's set-up timeout,
	// or the caller's context ended first.
	ErrTimeout = errors.New("hub: timed out")
	// ErrProtocol: the peer does not speak the hub protocol (or garbled it).
	ErrProtocol = errors.New("hub: protocol error")
	// ErrClosed: the server or member was closed.
	ErrClosed = errors.New("hub: closed")
	// ErrBadHubList: a list of hubs (IBIS_HUB, ParseHubs) is malformed.
	ErrBadHubList = errors.New("hub: invalid hub list")
)

// codeErr maps a result code to its error.
func codeErr(code byte) error {
	switch code {
	case codeNoSuchMember:
		return ErrNoSuchMember
	case codeRefused:
		return ErrRefused
	case codeUnreachable:
		return ErrUnreachable
	case codeTimeout:
		return ErrTimeout
	}
	return ErrProtocol
}

// resultError turns a hub's refusal into an error naming the hub and the pool.
func resultError(hubAddr, pool string, r resultMsg) error {
	if r.code == codeUnauthenticated {
		return fmt.Errorf("%w: hub %s, pool %q: %w: %s", ErrRefused, hubAddr, pool, poolauth.ErrUnauthenticated, r.message)
	}
	return fmt.Errorf("%w: hub %s, pool %q: %s", codeErr(r.code), hubAddr, pool, r.message)
}
