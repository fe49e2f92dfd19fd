// Package etcdtest gives tests real etcd servers: an embedded one inside the test
// process (Embedded), a cluster of Debian's etcd-server binary as separate OS
// processes that a test can kill, freeze and restart (StartCluster), and a TCP proxy
// that breaks a link the way a network partition does (NewProxy).
//
// It exists so that the registry's etcd store and its fault tests run against the
// etcd that production uses, not against a fake. Only tests import it. A typical
// fault test:
//
//	c := etcdtest.StartCluster(t, 3)            // skipped without etcd-server
//	proxies, eps := etcdtest.NewProxies(t, c.Endpoints())
//	// ... a registry front end on eps ...
//	leader, err := c.Leader(ctx)
//	err = c.Kill(leader)                         // or Stop/Cont, StopAll/StartAll
//	for _, p := range proxies {
//		p.Cut()                                  // partition the front end from etcd
//	}
//
// Everything a test starts here is stopped at t.Cleanup; test binaries that check
// for goroutine leaks pass GoleakIgnores to goleak.
package etcdtest
