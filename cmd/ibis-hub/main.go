// Command ibis-hub runs a relay hub (package internal/hub): members of grid sites
// behind a firewall or a NAT keep a connection to it, and when neither side of a
// connection can dial the other, the hub splices two connections that each member
// opened outward. The members then run their own end-to-end handshake (the pool check,
// and TLS when the pool uses it) through the hub, which sees only ciphertext with TLS.
//
// Usage:
//
//	ibis-hub [-listen :7700] [-secret-file FILE] [-pool-secrets FILE] [-log-level info]
//	         [-stats 0] [-max-conns 8192] [-max-conns-per-ip 2048]
//	         [-max-handshakes 1024] [-max-handshakes-per-ip 256] [-max-members 4096]
//	         [-max-pending 1024] [-handshake-timeout 10s] [-relay-timeout 10s]
//	         [-keepalive 5s] [-probe-timeout 1.5s] [-forward=true]
//
// Members find hubs through IBIS_HUB=host:port[,host:port]. Every connection to the
// hub, including one from another hub that forwards a relay, passes the pool check
// before the hub reads anything else from it.
//
// Without a pool secret the hub is OPEN: anyone who can reach its port can register
// and relay in any pool. -secret-file (or $IBIS_POOL_SECRET_FILE, or
// $IBIS_POOL_SECRET) gives every pool a secret; -pool-secrets FILE gives pools secrets
// of their own, a line "pool secret" each (# starts a comment), and with it and no
// secret for every pool only the listed pools are served. These work exactly as for
// ibis-registry; the files must not be readable by every user. The second line of
// output says whether the hub is open or authenticated.
//
// The -max flags bound what strangers and members may hold: connections in all and per
// source address (a NAT hides a whole site behind one), connections still in their
// pool check (in all and per address), registered members and relays waiting for their
// target. A relay whose target does not connect within -relay-timeout fails; a member
// silent for three -keepalive intervals is forgotten. On registration the hub dials
// each advertised address back (-probe-timeout each) to tell the member whether others
// can reach it directly. -forward=false refuses relays to members of other hubs.
//
// The hub stops cleanly on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(report(err, os.Stderr))
}

// report explains err on stderr, unless the flag package already did, and returns the
// exit status: 0, 2 for a bad command line, 1 for anything else.
func report(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errExplained):
		return 2
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, "ibis-hub:", err)
		return 2
	default:
		fmt.Fprintln(stderr, "ibis-hub:", err)
		return 1
	}
}
