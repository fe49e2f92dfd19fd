//go:build linux

package registryha

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/internal/etcdtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := removeBinary(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(etcdtest.GoleakIgnores()...); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left behind:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// testTimeout bounds every wait for a state the tests bring about; it is generous,
// since the tests must pass on a loaded machine, and no test asserts a duration.
const testTimeout = 90 * time.Second

// needHA skips a fault test under -short: each runs real etcd and registry processes
// for tens of seconds.
func needHA(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("registryha: fault tests of real etcd and ibis-registry processes take minutes; not under -short")
	}
}

// built is the ibis-registry binary the tests run, built once per test binary.
var built struct {
	mu  sync.Mutex
	dir string
	exe string
	err error
}

// buildTimeout bounds the go build; a cold build with the etcd client takes a minute
// or more on a loaded machine.
const buildTimeout = 10 * time.Minute

// registryBinary returns the path of ibis-registry built from this checkout, with
// the race detector when the tests have it, building it on first use.
func registryBinary(t *testing.T) string {
	t.Helper()
	built.mu.Lock()
	defer built.mu.Unlock()
	if built.exe == "" && built.err == nil {
		built.exe, built.err = build()
	}
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.exe
}

func build() (string, error) {
	dir, err := os.MkdirTemp("", "ibis-registryha-")
	if err != nil {
		return "", fmt.Errorf("registryha: directory for ibis-registry: %w", err)
	}
	built.dir = dir
	exe := filepath.Join(dir, "ibis-registry")
	args := []string{"build", "-o", exe}
	if raceEnabled {
		args = append(args, "-race")
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/ibis-registry")...)
	cmd.Dir = filepath.Join("..", "..") // the module's root, from test/registryha
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("registryha: go build ibis-registry: %w\n%s", err, out)
	}
	return exe, nil
}

// removeBinary deletes what build made.
func removeBinary() error {
	built.mu.Lock()
	defer built.mu.Unlock()
	if built.dir == "" {
		return nil
	}
	if err := os.RemoveAll(built.dir); err != nil {
		return fmt.Errorf("registryha: remove the built ibis-registry: %w", err)
	}
	built.dir = ""
	return nil
}
