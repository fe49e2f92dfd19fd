package grid_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// programs are the module's commands the tests run on the grid's hosts.
var programs = []string{"./cmd/ibis-registry", "./cmd/ibis-hub", "./examples/hello"}

// binaries are the programs, built once per test binary (one go build, into a directory
// removed when the tests end).
var binaries struct {
	mu    sync.Mutex
	dir   string
	built bool
}

// buildTimeout bounds the go build; a cold build takes tens of seconds.
const buildTimeout = 5 * time.Minute

// binary returns the executable of pkg (one of programs), building all of them on first
// use. They run as separate processes on the virtual hosts, so they are built without
// the race detector: they are the programs users run.
func binary(t *testing.T, pkg string) string {
	t.Helper()
	binaries.mu.Lock()
	defer binaries.mu.Unlock()
	if !binaries.built {
		if binaries.dir == "" {
			dir, err := os.MkdirTemp("", "ibis-grid-bin-")
			if err != nil {
				t.Fatal(err)
			}
			binaries.dir = dir
		}
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", binaries.dir + "/"}, programs...)...)
		cmd.Dir = filepath.Join("..", "..") // the module's root, from test/grid
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %v: %v\n%s", programs, err, out)
		}
		binaries.built = true
	}
	return filepath.Join(binaries.dir, path.Base(pkg))
}

// removeBinaries deletes what binary built.
func removeBinaries() error {
	binaries.mu.Lock()
	defer binaries.mu.Unlock()
	if binaries.dir == "" {
		return nil
	}
	if err := os.RemoveAll(binaries.dir); err != nil {
		return fmt.Errorf("removing the built programs: %w", err)
	}
	binaries.dir, binaries.built = "", false
	return nil
}
