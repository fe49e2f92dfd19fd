// Command ibis-registry runs the central Ibis registry server, through which
// the processes of Ibis pools find each other, elect leaders, signal each
// other and detect failures (see package registry).
//
// Usage:
//
//	ibis-registry [-host 0.0.0.0] [-port 8888] [-heartbeat 2s] [-death-timeout 30s] [-events] [-stats 10s] [-v]
//	              [-max-frame bytes] [-max-waiting n] [-max-member-bytes bytes]
//	              [-max-pool-names n] [-max-pool-bytes bytes] [-max-unjoined n]
//	              [-max-unjoined-per-source n]
//	              [-recovery-grace 10s] [-recovery-window 3s]
//	              [-max-pools-per-source 64] [-max-members-per-source 1024]
//	              [-secret-file FILE] [-pool-secrets FILE]
//	              [-tls-cert FILE -tls-key FILE -tls-ca FILE]
//
// A member whose connection breaks is declared dead at once; one that
// sends nothing for -death-timeout, counted after the server has read what
// arrived and leaving out time in which the server itself did not run
// (SIGSTOP, a paused virtual machine), is declared dead then. Members send
// a heartbeat, and the server a ping, every half -heartbeat (see "Failure
// detection" in package registry).
//
// The -max flags set the server's resource limits (see the Limits section
// of package registry); their defaults suit real runs.
//
// Without a pool secret and TLS the server is open: anyone who can reach
// its port can join any pool. -secret-file (or $IBIS_POOL_SECRET_FILE, or
// $IBIS_POOL_SECRET) gives every pool a secret, which each client must
// prove it knows, by a mutual challenge-response, before the server reads
// anything else from it; there is no flag for the secret itself, since
// every user of the machine can read a command line. -pool-secrets FILE
// gives pools secrets of their own, a line "pool secret" each (# starts a
// comment); with it and no secret for every pool, only the listed pools
// are served. The secret files must not be readable by every user.
// -tls-cert, -tls-key and -tls-ca (or $IBIS_TLS_CERT, $IBIS_TLS_KEY,
// $IBIS_TLS_CA) make every connection TLS 1.3, with client certificates
// of that CA required. Each refusal is logged with the client's address.
// The second line of output says whether the pools are secured
// ("ibis-registry pools: secured: authenticated and encrypted (...)") or
// open. See docs/SECURITY.md and the Trust section of package registry.
//
// The server may be restarted on the same address after it died (even
// killed with SIGKILL): the members of its pools rejoin it with their
// identities, elections and global names, and rebuild their pools (see
// "Registry restarts" in package registry). -recovery-grace bounds how long
// a rebuilt pool waits for members that do not come back (they are then
// declared dead); -recovery-window holds back new members of unknown pools
// for a while after the start, so that pools of the previous run are
// rebuilt before anyone new joins them.
//
// The default port comes from IBIS_REGISTRY_PORT when set, else 8888. The
// server stops cleanly on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "ibis-registry:", err)
		os.Exit(1)
	}
}
