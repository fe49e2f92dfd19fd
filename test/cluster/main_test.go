// Package cluster_test runs pools across virtual hosts: Linux network namespaces with their
// own addresses on one bridge (internal/netns), so that every connection crosses a real
// network interface instead of 127.0.0.1. It runs the conformance suite with its parent on
// one host and its children on the others, the applications started as ibis-run starts
// them (a registry server, each process told its pool by the environment) with their
// results compared bitwise to a run on 127.0.0.1, and a host's link cut in the middle of a
// run. Everything needs root and the ip command; without them the tests skip, saying why.
package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	_ "github.com/ibisgo/ibis/impl/nio"
	_ "github.com/ibisgo/ibis/impl/tcp"
	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/internal/netns"
	"github.com/ibisgo/ibis/internal/vcluster"
	"github.com/ibisgo/ibis/test/conformance"
)

func TestMain(m *testing.M) {
	if conformance.IsChild() {
		os.Exit(conformance.RunChild())
	}
	code := m.Run()
	if err := removeBinaries(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if code == 0 {
		// Every goroutine of the tests (output readers, child waiters) must have ended.
		if err := goleak.Find(leakcheck.Options()...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// newNetwork builds a virtual network of n hosts that the test's cleanup removes, or skips
// the test when this machine cannot build one (not root, no ip command).
func newNetwork(t *testing.T, n int) *netns.Network {
	t.Helper()
	nw, err := netns.New(context.Background(), n)
	if errors.Is(err, netns.ErrUnavailable) {
		vcluster.SkipOrFail(t, fmt.Sprintf("this test needs network namespaces (root and the ip command): %v", err))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := nw.Close(); err != nil {
			t.Errorf("removing the virtual network: %v", err)
		}
	})
	return nw
}
