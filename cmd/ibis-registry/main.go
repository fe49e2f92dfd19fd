// Command ibis-registry runs the central Ibis registry server, through which
// the processes of Ibis pools find each other, elect leaders, signal each
// other and detect failures (see package registry).
//
// Usage:
//
//	ibis-registry [-host 0.0.0.0] [-port 8888] [-heartbeat 2s] [-events] [-stats 10s] [-v]
//	              [-max-frame bytes] [-max-waiting n] [-max-member-bytes bytes]
//	              [-max-pool-names n] [-max-pool-bytes bytes] [-max-unjoined n]
//	              [-recovery-grace 10s] [-recovery-window 3s]
//
// The -max flags set the server's resource limits (see the Limits section
// of package registry); their defaults suit real runs.
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
