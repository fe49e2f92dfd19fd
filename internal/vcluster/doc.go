// Package vcluster builds a virtual cluster on this machine for tests and benchmarks that
// must run across hosts: N hosts h1..hN, each a Linux network namespace (internal/netns)
// with its own address on one bridge, its own host name and /etc/hosts naming every host;
// optionally a rate limit per link, SLURM (one slurmctld on h1, one slurmd per host, a
// private munged) and Open MPI's mpirun across the hosts. With WithSites the hosts are
// spread over sites, each a bridge and a gateway, joined by a router whose link emulator
// (internal/wanemu) delays and drops the packets between sites; sites may be firewalled
// or behind NAT (sites.go, wan.go).
//
// A binary that links this package plays the cluster's own parts when IBIS_VCLUSTER_SELF
// names one (the link emulator, the probes of MeasureRTT and MeasureTransfer): init does
// so and exits, so that a test binary needs no other program.
//
// A process runs on a host through Cluster.Command or the prefix Cluster.Exec gives:
// `nsenter --net` into the host's namespace, then `unshare --mount --uts`, which gives the
// process its own host name (hN, set per process: no persistent namespace to unmount) and a
// private mount namespace where the cluster's /etc/hosts is bind-mounted over /etc/hosts, as
// `ip netns exec` does, but keeping the machine's /sys, whose cgroup mounts slurmd needs.
//
// Everything a cluster makes carries its id (ivc-XXXXXXXX): its namespaces (ID-sw, ID-h0
// for h1, ...), /etc/netns/ID-*, and a state directory /run/ibis-vcluster/ID holding the
// owner's pid, the SLURM and munge configuration, spools, logs and mpirun's files. Close
// removes it all and stops every process in it. A cluster whose owner died without Close
// (SIGKILL) is swept by the next Up on the machine. Building a cluster needs root, `ip`,
// `unshare`, and for the options `tc`, slurm-wlm and munge, openmpi-bin: Unavailable says
// what is missing, so tests can skip with the reason.
package vcluster
