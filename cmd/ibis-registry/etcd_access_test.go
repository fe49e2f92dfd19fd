package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/etcdtest"
	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/registry"
)

// env is a getenv over a map.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// -etcd-ca, -etcd-cert, -etcd-key, -etcd-user and the password's file: a front end
// reaches an etcd that takes TLS clients with certificates of its CA only and has
// its authentication on, and says so at start.
func TestRunReachesEtcdOverTLSWithLogin(t *testing.T) {
	eps, files, tc := etcdtest.EmbeddedTLS(t)
	etcdtest.EnableAuth(t, eps, tc, "root", "pw", "")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pwFile := filepath.Join(t.TempDir(), "etcd-password")
	if err := os.WriteFile(pwFile, []byte("pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-host", "127.0.0.1", "-port", "0", "-recovery-window", "0", "-store", "etcd://" + eps[0],
			"-etcd-ca", files.CA, "-etcd-cert", files.Cert, "-etcd-key", files.Key, "-etcd-user", "root"},
			env(map[string]string{envEtcdPasswordFile: pwFile}), &stdout, &stderr)
	}()
	out := waitOutput(t, &stdout, "logged in as root)\n")
	if !strings.Contains(out, "etcd at "+eps[0]+" (shared with every front end over it; TLS, client certificate "+files.Cert) {
		t.Fatalf("start lines:\n%s", out)
	}
	addr := strings.TrimSpace(strings.SplitN(strings.TrimPrefix(out, "ibis-registry listening on "), "\n", 2)[0])
	c, err := registry.Join(ctx, addr, "etcd-tls", registry.WithAddress("x:1"))
	if err != nil {
		t.Fatalf("join: %v; stderr:\n%s", err, stderr.String())
	}
	if w, err := c.Elect(ctx, "e"); err != nil || w != c.Identity() {
		t.Fatalf("elect: %v, %v", w, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run after cancel: %v", err)
	}
}

func TestEtcdAccessFlags(t *testing.T) {
	files, err := tlsconf.Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	store := []string{"-store", "etcd://127.0.0.1:2379"}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string // an error, or with ok the summary
		ok   bool
	}{
		{store, nil, "plain gRPC", true},
		{append(store, "-etcd-ca", files.CA), nil, "TLS", true},
		{append(store, "-etcd-cert", files.Cert, "-etcd-key", files.Key), nil, "TLS, etcd's certificate checked against the system's roots, client certificate", true},
		{append(store, "-etcd-ca", files.CA, "-etcd-user", "u"), map[string]string{envEtcdPassword: "pw"}, "TLS, logged in as u", true},
		{append(store, "-etcd-user", "u", "-etcd-password-file", pwFile), nil, "in the clear", true},
		{[]string{"-etcd-ca", files.CA}, nil, "need -store etcd://", false},
		{append(store, "-etcd-cert", files.Cert), nil, "needs its key", false},
		{append(store, "-etcd-ca", filepath.Join(t.TempDir(), "none.pem")), nil, "none.pem", false},
		{append(store, "-etcd-user", "u"), nil, "no password", false},
		{append(store, "-etcd-user", "u", "-etcd-password-file", filepath.Join(t.TempDir(), "none")), nil, "-etcd-password-file", false},
		{append(store, "-etcd-password-file", pwFile), nil, "no -etcd-user", false},
		{store, map[string]string{envEtcdPasswordFile: pwFile}, "no -etcd-user", false},
		{store, map[string]string{envEtcdPassword: "pw"}, "no -etcd-user", false},
	} {
		cfg, err := parseFlags(c.args, noEnv, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		_, how, err := etcdAccess(cfg, env(c.env))
		switch {
		case c.ok && (err != nil || !strings.Contains(how, c.want)):
			t.Errorf("%q %v: %q, %v; want %q", c.args, c.env, how, err, c.want)
		case !c.ok && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q %v: %v; want an error saying %q", c.args, c.env, err, c.want)
		}
	}
}
