package grid_test

import (
	"testing"

	"github.com/ibisgo/ibis/internal/testbin"
)

// programs are the module's commands the tests run on the grid's hosts.
var programs = []string{"./cmd/ibis-registry", "./cmd/ibis-hub", "./examples/hello"}

// binaries are the programs, built once per test binary (one go build).
var binaries = testbin.New("ibis-grid-bin-")

// binary returns the executable of pkg (one of programs), building all of them on first
// use.
func binary(t *testing.T, pkg string) string {
	binaries.Build(t, programs...)
	return binaries.Binary(t, pkg)
}

// removeBinaries deletes what binary built.
func removeBinaries() error { return binaries.Remove() }
