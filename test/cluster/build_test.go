package cluster_test

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

// binaries are the programs the tests built, each once per test run (go build, in a
// directory removed when the tests end).
var binaries struct {
	mu    sync.Mutex
	dir   string
	built map[string]string // package path (./apps/sor) to its executable
}

// buildTimeout bounds one go build; a cold build of an application takes tens of seconds.
const buildTimeout = 5 * time.Minute

// binary returns the executable of the module's package pkg (such as "./apps/sor"),
// building it on first use. The binaries run as separate processes on the virtual hosts,
// so they are built without the race detector: they are the programs users run.
func binary(t *testing.T, pkg string) string {
	t.Helper()
	binaries.mu.Lock()
	defer binaries.mu.Unlock()
	if exe, ok := binaries.built[pkg]; ok {
		return exe
	}
	if binaries.dir == "" {
		dir, err := os.MkdirTemp("", "ibis-cluster-bin-")
		if err != nil {
			t.Fatal(err)
		}
		binaries.dir, binaries.built = dir, map[string]string{}
	}
	exe := filepath.Join(binaries.dir, path.Base(pkg))
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", exe, pkg)
	cmd.Dir = filepath.Join("..", "..") // the module's root, from test/cluster
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	binaries.built[pkg] = exe
	return exe
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
	binaries.dir, binaries.built = "", nil
	return nil
}
