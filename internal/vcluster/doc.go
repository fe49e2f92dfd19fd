// Package vcluster builds a virtual cluster on this machine for tests and benchmarks that
// must run across hosts: N hosts h1..hN, each a Linux network namespace (internal/netns)
// with its own address on one bridge, its own host name and /etc/hosts naming every host;
// optionally a rate limit per link, SLURM (one slurmctld on h1, one slurmd per host, a
// private munged) and Open MPI's mpirun across the hosts.
//
// A process runs on a host through Cluster.Command or the prefix Cluster.Exec gives:
// `ip netns exec` (which also bind-mounts the host's /etc/netns/NS/hosts over /etc/hosts)
// and `unshare --uts`, which gives the process a UTS namespace of its own whose host name is
// the host's. The name is set per process, not kept in a persistent namespace, so there is
// no mount to undo. Every process on a host sees `hostname` = hN, as mpirun and slurmd need.
//
// Everything a cluster makes carries its id (ivc-XXXXXXXX): its namespaces (ID-sw, ID-h0
// for h1, ...), /etc/netns/ID-*, and a state directory /run/ibis-vcluster/ID holding the
// owner's pid, the SLURM and munge configuration, spools, logs and mpirun's files. Close
// removes it all and stops every process in it. A cluster whose owner died without Close
// (SIGKILL) is swept by the next Up on the machine. Building a cluster needs root, `ip`,
// `unshare`, and for the options `tc`, slurm-wlm and munge, openmpi-bin: Unavailable says
// what is missing, so tests can skip with the reason.
package vcluster
