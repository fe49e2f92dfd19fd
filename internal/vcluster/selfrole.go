package vcluster

import (
	"os"

	"github.com/ibisgo/ibis/internal/wanemu"
)

// init plays the part envSelf names, in a binary the cluster started (the running one: a
// test binary, the vcluster command), and exits: so that a cluster built by a test runs
// its link emulator without a separate build.
func init() {
	switch os.Getenv(envSelf) {
	case "":
	case "wanemu":
		os.Exit(wanemu.Main(os.Args[1:], os.Stderr))
	default:
		os.Exit(selfRole(os.Getenv(envSelf), os.Args[1:]))
	}
}
