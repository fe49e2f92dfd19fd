// Package testbin builds the module's programs for tests that run them as processes of
// their own (on virtual hosts, on an emulated grid): each once per test binary, without
// the race detector, since they are the programs users run, into a directory that Remove
// deletes when the tests end.
package testbin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// BuildTimeout bounds one go build; a cold build of an application takes tens of seconds.
const BuildTimeout = 5 * time.Minute

// Set is the programs one test binary built.
type Set struct {
	prefix string
	mu     sync.Mutex
	dir    string
	built  map[string]string // package path (./apps/sor) to its executable
}

// New returns an empty set whose directory will be named after prefix.
func New(prefix string) *Set { return &Set{prefix: prefix} }

// Build builds those of pkgs (module package paths such as "./apps/sor") not built yet,
// in one go build; it fails the test when the build fails.
func (s *Set) Build(t testing.TB, pkgs ...string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var todo []string
	for _, p := range pkgs {
		if _, ok := s.built[p]; !ok {
			todo = append(todo, p)
		}
	}
	if len(todo) == 0 {
		return
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if s.dir == "" {
		dir, err := os.MkdirTemp("", s.prefix)
		if err != nil {
			t.Fatal(err)
		}
		s.dir, s.built = dir, map[string]string{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), BuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", s.dir + string(filepath.Separator)}, todo...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", todo, err, out)
	}
	for _, p := range todo {
		s.built[p] = filepath.Join(s.dir, filepath.Base(p))
	}
}

// Binary returns the executable of pkg, building it on first use.
func (s *Set) Binary(t testing.TB, pkg string) string {
	t.Helper()
	s.Build(t, pkg)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.built[pkg]
}

// Remove deletes what the set built.
func (s *Set) Remove() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir == "" {
		return nil
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("removing the built programs: %w", err)
	}
	s.dir, s.built = "", nil
	return nil
}

// moduleRoot is the nearest directory at or above the working directory with a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("testbin: no go.mod at or above the working directory")
		}
		dir = up
	}
}
