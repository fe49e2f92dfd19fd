package mp

import (
	"context"
	"net"
	"time"

	"github.com/ibisgo/ibis/internal/addrlist"
)

// probeFloor is the least time a probe of one of rank 0's registry addresses gets.
const probeFloor = 2 * time.Second

// registryListen is where rank 0's registry listens. A job on one node keeps it on
// loopback (or the pinned host). A job across nodes listens on the pinned host when it
// is one the others can reach (not loopback, not a wildcard), and otherwise on every
// interface (all true): rank 0 then tells the others the list of its addresses
// (addrlist.Choose) and each takes the first it reaches (pickReachable).
func registryListen(host string, multiNode bool) (listen string, all bool) {
	pinned := host != "" && !addrlist.IsWildcard(net.JoinHostPort(host, "0"))
	if !multiNode {
		if pinned {
			return host, false
		}
		return "127.0.0.1", false
	}
	if pinned && !addrlist.IsLoopback(host) {
		return host, false
	}
	return "", true
}

// pickReachable returns the first address of a published list that accepts a TCP
// connection, each tried for an equal share of ctx's time (at least probeFloor), or the
// first of the list when none does (joining it then says what failed). A single address
// is returned untried.
func pickReachable(ctx context.Context, published string) string {
	list, err := addrlist.Parse(published)
	if err != nil || len(list) == 1 {
		return published
	}
	for i, a := range list {
		pctx, cancel := context.WithCancel(ctx)
		if dl, ok := ctx.Deadline(); ok && i < len(list)-1 {
			cancel()
			pctx, cancel = context.WithTimeout(ctx, max(time.Until(dl)/time.Duration(len(list)-i), probeFloor))
		}
		var d net.Dialer
		c, err := d.DialContext(pctx, "tcp", a)
		cancel()
		if err == nil {
			_ = c.Close()
			return a
		}
		if ctx.Err() != nil {
			break
		}
	}
	return list[0]
}
