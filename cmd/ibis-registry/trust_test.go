package main

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/registry"
)

// envOf returns a getenv for the given variables.
func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // whatever the umask
		t.Fatal(err)
	}
	return path
}

func TestTrustConfiguration(t *testing.T) {
	dir := t.TempDir()
	private := writeFile(t, filepath.Join(dir, "secret"), "s3cret\n", 0o600)
	public := writeFile(t, filepath.Join(dir, "public"), "s3cret\n", 0o644)
	groupOnly := writeFile(t, filepath.Join(dir, "group"), "s3cret\n", 0o640)
	files, err := tlsconf.Generate(dir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	parse := func(args ...string) config {
		t.Helper()
		cfg, err := parseFlags(args, noEnv, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	for _, c := range []struct {
		name    string
		args    []string
		env     map[string]string
		summary string // "" when an error is wanted
		errText string
	}{
		{"open", nil, nil, "no pool secret", ""},
		{"secret file", []string{"-secret-file", private}, nil, "a secret for every pool", ""},
		{"secret file of the group", []string{"-secret-file", groupOnly}, nil, "a secret for every pool", ""},
		{"world-readable secret file", []string{"-secret-file", public}, nil, "", "every user"},
		{"missing secret file", []string{"-secret-file", filepath.Join(dir, "none")}, nil, "", "no such file"},
		{"secret from the environment", nil, map[string]string{envSecret: "x"}, "a secret for every pool", ""},
		{"secret file from the environment", nil, map[string]string{envSecretFile: private}, "a secret for every pool", ""},
		{"world-readable secret file from the environment", nil, map[string]string{envSecretFile: public}, "", "every user"},
		{"both in the environment", nil, map[string]string{envSecret: "x", envSecretFile: private}, "", "give one"},
		{"flag over environment", []string{"-secret-file", private}, map[string]string{envSecret: "x", envSecretFile: private},
			"a secret for every pool", ""},
		{"TLS flags", []string{"-tls-cert", files.Cert, "-tls-key", files.Key, "-tls-ca", files.CA}, nil, "TLS 1.3", ""},
		{"TLS environment", nil, map[string]string{envTLSCert: files.Cert, envTLSKey: files.Key, envTLSCA: files.CA}, "TLS 1.3", ""},
		{"TLS incomplete", []string{"-tls-cert", files.Cert}, nil, "", "needs a certificate, its key and the CA"},
		{"TLS flag and environment", []string{"-tls-ca", files.CA}, map[string]string{envTLSCert: files.Cert, envTLSKey: files.Key},
			"TLS 1.3", ""},
	} {
		tr, err := loadTrust(parse(c.args...), envOf(c.env))
		switch {
		case c.summary == "" && (err == nil || !strings.Contains(err.Error(), c.errText)):
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.errText)
		case c.summary != "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.summary != "" && !strings.Contains(tr.summary, c.summary):
			t.Errorf("%s: summary %q, want %q", c.name, tr.summary, c.summary)
		case c.summary != "":
			// The line printed at start says at once whether the pools are secured.
			want := "ibis-registry pools: OPEN (not authenticated, not encrypted) (no pool secret"
			switch {
			case strings.Contains(c.summary, "TLS"):
				want = "ibis-registry pools: secured: authenticated and encrypted ("
			case strings.Contains(c.summary, "secret for every pool"):
				want = "ibis-registry pools: authenticated, not encrypted (a secret for every pool; no TLS)"
			}
			if !strings.HasPrefix(tr.headline(), want) {
				t.Errorf("%s: headline %q, want it to begin %q", c.name, tr.headline(), want)
			}
		}
	}
}

// The file's format is tested with package poolsecrets; here, that the flag reaches it.
func TestPoolSecretsFile(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, filepath.Join(dir, "good"), "# pools\n\nrun42  s e c r e t \n\trun43\tother\n", 0o600)
	cfg, err := parseFlags([]string{"-pool-secrets", good}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := loadTrust(cfg, noEnv)
	if err != nil || !strings.Contains(tr.summary, "secrets for 2 pools, which alone are served") {
		t.Fatalf("summary %q, %v", tr.summary, err)
	}
}

// TestSecuredRegistryProcess runs ibis-registry in a child process with a
// secret file, per-pool secrets and TLS, all given by flags: members with
// the right secret and certificate join; a wrong secret, a pool it does
// not serve and a certificate of another CA are refused with
// ErrUnauthenticated, each logged with the client's address.
func TestSecuredRegistryProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
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
	other, err := tlsconf.Generate(otherDir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cliTLS, err := files.Client()
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := tlsconf.Files{Cert: other.Cert, Key: other.Key, CA: files.CA}.Client()
	if err != nil {
		t.Fatal(err)
	}
	secretFile := writeFile(t, filepath.Join(dir, "secret"), "site-secret\n", 0o600)
	poolSecrets := writeFile(t, filepath.Join(dir, "pools"), "own own-secret\n", 0o600)
	p := startRegistry(t, "-host", "127.0.0.1", "-port", "0", "-recovery-window", "0",
		"-secret-file", secretFile, "-pool-secrets", poolSecrets,
		"-tls-cert", files.Cert, "-tls-key", files.Key, "-tls-ca", files.CA)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	join := func(pool, secret string, tc *tls.Config) (*registry.Client, error) {
		return registry.Join(ctx, p.addr, pool, registry.WithPoolSecret([]byte(secret)), registry.WithTLS(tc))
	}
	good := cliTLS
	for _, c := range []struct{ pool, secret string }{{"p", "site-secret"}, {"own", "own-secret"}} {
		m, err := join(c.pool, c.secret, good)
		if err != nil {
			t.Fatalf("join %s: %v", c.pool, err)
		}
		if _, err := m.Sequence(ctx, "n"); err != nil {
			t.Fatal(err)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, pool, secret string
		tc                 *tls.Config
		log                string
	}{
		{"wrong secret", "p", "guess", good, "wrong proof"},
		{"site secret for a pool with its own", "own", "site-secret", good, "wrong proof"},
		{"certificate of another CA", "p", "site-secret", stranger, "TLS handshake failed"},
	} {
		_, err := join(c.pool, c.secret, c.tc)
		if !errors.Is(err, registry.ErrUnauthenticated) {
			t.Fatalf("%s: %v, want ErrUnauthenticated", c.name, err)
		}
		waitOutputLine(t, p.c.Stderr, "refused a connection", c.log, "127.0.0.1:")
	}
}

// waitOutputLine waits until one line of the output (what output returns)
// holds every one of want.
func waitOutputLine(t *testing.T, output func() string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, line := range strings.Split(output(), "\n") {
			all := true
			for _, w := range want {
				all = all && strings.Contains(line, w)
			}
			if all {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no line with %q in the output:\n%s", want, output())
		}
		time.Sleep(time.Millisecond)
	}
}
