package test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestQuickStart runs what README.md's quick start runs: the launcher starting a pool of
// hello processes around its embedded registry.
func TestQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the launcher and the example")
	}
	bin := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+string(filepath.Separator), "../cmd/ibis-run", "../examples/hello")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := exec.CommandContext(ctx, filepath.Join(bin, "ibis-run"), "-np", "3", "-timeout", "2m", "--", filepath.Join(bin, "hello"), "-n", "4")
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("ibis-run -np 3 -- hello: %v\n%s", err, out)
	}
	text := string(out)
	if !strings.Contains(text, "server: served 8 requests") {
		t.Errorf("the server did not serve both clients' 4 requests:\n%s", text)
	}
	if n := strings.Count(text, "(want "); n != 8 {
		t.Errorf("%d client replies, want 8:\n%s", n, text)
	}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if !strings.HasPrefix(line, "[") {
			t.Errorf("line without a rank prefix: %q", line)
		}
	}
}
