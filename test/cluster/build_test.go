package cluster_test

import (
	"testing"

	"github.com/ibisgo/ibis/internal/testbin"
)

// binaries are the programs the tests run on the virtual hosts, each built once per
// test run.
var binaries = testbin.New("ibis-cluster-bin-")

// binary returns the executable of the module's package pkg (such as "./apps/sor"),
// building it on first use.
func binary(t *testing.T, pkg string) string { return binaries.Binary(t, pkg) }

// removeBinaries deletes what binary built.
func removeBinaries() error { return binaries.Remove() }
