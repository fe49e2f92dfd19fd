package etcdtest

import "go.uber.org/goleak"

// GoleakIgnores returns the goleak options a test binary that uses this package
// adds to its leak check, e.g. goleak.VerifyTestMain(m, etcdtest.GoleakIgnores()...).
//
// With etcd v3.7.3 the list is empty: once the clients are closed and the servers
// stopped (t.Cleanup does both), no etcd, gRPC or proxy goroutine is left. This was
// checked with sessions, elections, leases, watches (also with WithRequireLeader),
// compaction, servers stopped under live clients, killed and frozen cluster nodes
// and cut proxies; this package's own TestMain runs goleak with these options, so
// an etcd upgrade that leaves a goroutine behind fails there and is listed here.
func GoleakIgnores() []goleak.Option {
	return []goleak.Option{}
}
