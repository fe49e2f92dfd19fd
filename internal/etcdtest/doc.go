// Package etcdtest gives tests real etcd servers: an embedded one inside the test
// process (Embedded), a cluster of Debian's etcd-server binary as separate OS
// processes that a test can kill, stop and restart (StartCluster), and a TCP proxy
// that can cut a link the way a network partition does (NewProxy).
//
// It exists so that the registry's etcd store and its fault tests run against the
// same etcd that production uses, not against a fake. Only tests import it.
package etcdtest
