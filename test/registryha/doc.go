// Package registryha checks that a registry of several ibis-registry front ends
// over one etcd cluster survives its faults as issue 26 promises: the front ends are
// real ibis-registry processes, etcd is a real three-node cluster of Debian's
// etcd-server, and the members are registry clients in the test process, each
// listing both front ends.
//
// Each test injects one fault while the members join, elect, signal and draw
// sequence numbers: SIGKILL of a front end, SIGKILL of the etcd leader, SIGSTOP of a
// front end for 20 s (and for a member's leave), every etcd node down for 10 s, and
// a front end cut off from etcd. One checker then holds every member's record of events to the registry's
// promises: per member, events in strictly increasing order with no duplicate and,
// after its own join, no gap; the same event at the same place for every member;
// one winner per election; no death of a member that is alive; sequence numbers
// unique and gap-free; no signal lost. A test of the checker itself shows that it
// finds each kind of broken promise.
//
// The package has only tests. The fault tests need Linux and /usr/bin/etcd (they
// skip without it, or fail where IBIS_REQUIRE_ETCD=1), take about a minute and a
// half, and skip under go test -short.
package registryha
