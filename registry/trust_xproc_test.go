package registry_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/registry"
)

// TestCrossProcessSecretAndTLS runs the registry server in a process of
// its own with a pool secret (read from a 0600 file) and TLS: members with
// the secret and a certificate of the pool's CA join and talk; a wrong
// secret, no secret, and a certificate of another CA are refused with
// ErrUnauthenticated, and the server's log names each refusal with the
// client's address. The server is then killed and restarted, and the
// members rejoin it through TLS and the pool check again.
func TestCrossProcessSecretAndTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	poolDir, otherDir := filepath.Join(dir, "pool"), filepath.Join(dir, "other")
	for _, d := range []string{poolDir, otherDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	files, err := tlsconf.Generate(poolDir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	otherFiles, err := tlsconf.Generate(otherDir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cliTLS, err := files.Client()
	if err != nil {
		t.Fatal(err)
	}
	otherTLS, err := otherFiles.Client()
	if err != nil {
		t.Fatal(err)
	}
	secretFile := filepath.Join(dir, "secret")
	if err := os.WriteFile(secretFile, []byte("cluster-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{serverSecretEnv + "=" + secretFile, serverTLSDirEnv + "=" + poolDir}
	server, addr := startServerProcess(t, "127.0.0.1:0", "3s", env...)

	ok := []registry.Option{registry.WithTLS(cliTLS), secret("cluster-secret")}
	ctx := testContext(t)
	a := joinAt(t, addr, "xs", ok...)
	b := joinAt(t, addr, "xs", ok...)
	waitEvent(t, a, "b's Joined", isEvent(registry.Joined, b.Identity()))
	if _, err := a.Elect(ctx, "leader"); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name string
		opts []registry.Option
		log  string
	}{
		{"wrong secret", []registry.Option{registry.WithTLS(cliTLS), secret("guess")}, "wrong proof"},
		{"no secret", []registry.Option{registry.WithTLS(cliTLS)}, "gave none"},
		{"certificate of another CA", []registry.Option{registry.WithTLS(strangerTLS(t, files)), secret("cluster-secret")}, "unknown authority"},
		{"trusting another CA", []registry.Option{registry.WithTLS(otherTLS), secret("cluster-secret")}, "TLS handshake failed"},
	} {
		err := refused(t, addr, "xs", registry.ErrUnauthenticated, c.opts...)
		if errors.Is(err, registry.ErrRegistryLost) {
			t.Errorf("%s: %v also matches ErrRegistryLost", c.name, err)
		}
		waitLogLine(t, server, "refused a connection", c.log, "127.0.0.1:")
	}

	server.kill() // SIGKILL
	for _, c := range []*registry.Client{a, b} {
		waitEvent(t, c, "RegistryLost", isLost(registry.LostReconnecting))
	}
	server, _ = startServerProcess(t, addr, "3s", env...)
	for _, c := range []*registry.Client{a, b} {
		waitEvent(t, c, "RegistryRestored", isRestored)
		if w, err := c.ElectionResult(ctx, "leader"); err != nil || w != a.Identity() {
			t.Fatalf("election after the restart: %v, %v", w, err)
		}
	}
	refused(t, addr, "xs", registry.ErrUnauthenticated, registry.WithTLS(otherTLS), secret("cluster-secret"))
	waitLogLine(t, server, "refused a connection", "TLS handshake failed", "127.0.0.1:")
}

// waitLogLine waits until one line of the child's stderr holds every one
// of want.
func waitLogLine(t *testing.T, c *child, want ...string) {
	t.Helper()
	eventually(t, "a line with "+strings.Join(want, ", ")+" in the server's log", func() bool {
		for _, line := range strings.Split(c.c.Stderr(), "\n") {
			all := true
			for _, w := range want {
				all = all && strings.Contains(line, w)
			}
			if all {
				return true
			}
		}
		return false
	})
}
