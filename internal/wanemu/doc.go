// Package wanemu is the wide-area link emulator of the virtual cluster's grid
// (internal/vcluster with sites): a userspace delay line between the sites.
//
// The router namespace sends every packet that crosses between two sites into a TUN
// device; the emulator reads it, finds its source and destination sites by their IPv4
// prefixes, drops a share of the packets (loss), holds the rest for the one-way delay
// between the two sites and writes them back to the TUN device, in order per pair of
// sites, from where the kernel routes them on. This kernel has no netem; bandwidth is
// tc tbf's job, on the sites' links.
//
// Each site has a delay and a loss; a packet from site a to site b is held for the mean
// of a's and b's delays and lost with the mean of their losses, so that with one setting
// for all sites the one-way delay between any two is that setting (the round trip twice
// it). A site whose link is down passes nothing to or from the other sites.
//
// Memory is bounded: each pair of sites queues at most Config.QueueBytes bytes, and all
// pairs together Config.TotalBytes; a packet beyond either is dropped (tail drop) and
// counted.
package wanemu
