package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// unsetenv removes k from the environment for the test (restored afterwards).
func unsetenv(t *testing.T, k string) {
	t.Helper()
	t.Setenv(k, "")
	os.Unsetenv(k)
}

// TestSecretAndTLSEnvironment: with -secret and -tls every process gets the file names
// (never the secret itself; an inherited IBIS_POOL_SECRET is left out), the files exist
// with private modes in one private directory, and the directory is gone once the pool
// has ended.
func TestSecretAndTLSEnvironment(t *testing.T) {
	t.Setenv("IBIS_POOL_SECRET", "stale") // would contradict the file
	t.Setenv("IBIS_TLS_CA", "/stale/ca.pem")
	code, out, errOut := runSelf(t, context.Background(), []string{"-np", "2", "-secret", "-tls"}, "trust")
	if code != 0 {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var dir string
	for i := range 2 {
		got := linesOf(out, i)
		want := []string{"IBIS_POOL_SECRET set false", "IBIS_POOL_SECRET_FILE pool-secret", "IBIS_TLS_CERT cert.pem",
			"IBIS_TLS_KEY key.pem", "IBIS_TLS_CA ca.pem"}
		if len(got) != len(want)+1 || !slices.Equal(got[:len(want)], want) {
			t.Fatalf("process %d printed %q, want %q and the directory", i, got, want)
		}
		d, _ := strings.CutPrefix(got[len(want)], "dir ")
		if i == 0 {
			dir = d
		} else if d != dir {
			t.Fatalf("process %d got directory %s, process 0 %s", i, d, dir)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the private directory %s is still there after the run: %v", dir, err)
	}
}

// TestWithoutSecretOrTLS: without the flags nothing of the kind is set.
func TestWithoutSecretOrTLS(t *testing.T) {
	for _, k := range []string{"IBIS_POOL_SECRET", "IBIS_POOL_SECRET_FILE", "IBIS_TLS_CERT", "IBIS_TLS_KEY", "IBIS_TLS_CA"} {
		unsetenv(t, k)
	}
	code, out, errOut := runSelf(t, context.Background(), []string{"-np", "1"}, "trust")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	want := []string{"IBIS_POOL_SECRET set false", "IBIS_POOL_SECRET_FILE unset", "IBIS_TLS_CERT unset", "IBIS_TLS_KEY unset",
		"IBIS_TLS_CA unset"}
	if got := linesOf(out, 0); !slices.Equal(got, want) {
		t.Fatalf("printed %q, want %q", got, want)
	}
}

// TestSecretAndTLSPool: the processes join the embedded registry with the secret and
// the certificate they were given (through package registry, as a program's Ibis would
// through ipl), and share one closed-world pool.
func TestSecretAndTLSPool(t *testing.T) {
	unsetenv(t, "IBIS_POOL_SECRET")
	for _, flags := range [][]string{{"-secret"}, {"-tls"}, {"-secret", "-tls"}} {
		code, out, errOut := runSelf(t, context.Background(), append([]string{"-np", "3", "-heartbeat", joinHeartbeat}, flags...),
			"trust", envJoin+"=yes")
		if code != 0 {
			t.Fatalf("%v: exit %d, stdout:\n%s\nstderr:\n%s", flags, code, out, errOut)
		}
		for i := range 3 {
			got := linesOf(out, i)
			if len(got) == 0 || !strings.HasPrefix(got[len(got)-1], "pool size 3 heartbeat "+joinHeartbeat+" sequence ") {
				t.Fatalf("%v: process %d printed %q", flags, i, got)
			}
		}
		// ibis-run says, before anything else, that the pool is secured and how.
		var want []string
		if slices.Contains(flags, "-secret") {
			want = append(want, "authenticated by a pool secret")
		}
		if slices.Contains(flags, "-tls") {
			want = append(want, "encrypted by TLS 1.3 (registry and tcp connections) with certificates of a throw-away CA")
		}
		if line := "ibis-run: the pool is " + strings.Join(want, " and ") + "\n"; !strings.HasPrefix(errOut, line) {
			t.Errorf("%v: stderr does not begin with %q:\n%s", flags, line, errOut)
		}
	}
}

// TestStrangerRefused: a process that does not use the secret or the certificate is
// refused by the embedded registry, with an error that says so.
func TestStrangerRefused(t *testing.T) {
	unsetenv(t, "IBIS_POOL_SECRET")
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"-secret"}, "not authenticated"},
		// A plain client of the TLS registry waits for the registry to give up on it.
		{[]string{"-tls", "-heartbeat", "100ms"}, "expect TLS"},
	} {
		code, out, errOut := runSelf(t, context.Background(), append([]string{"-np", "1"}, c.flags...), "trust", envJoin+"=bare")
		if code != 91 || !strings.Contains(errOut, c.want) {
			t.Fatalf("%v: exit %d, want 91 (join failed) saying %q; stdout:\n%s\nstderr:\n%s", c.flags, code, c.want, out, errOut)
		}
	}
}

// TestInheritedSecret: without -secret, an embedded registry takes the pool secret of
// ibis-run's own environment, which the processes inherit: they join with it, and a
// process without it is refused.
func TestInheritedSecret(t *testing.T) {
	unsetenv(t, "IBIS_POOL_SECRET")
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil { // as the child checks
		t.Fatal(err)
	}
	path := filepath.Join(dir, "secret")
	if err := os.WriteFile(path, []byte("inherited\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("IBIS_POOL_SECRET_FILE", path)
	code, out, errOut := runSelf(t, context.Background(), []string{"-np", "2"}, "trust", envJoin+"=yes")
	if code != 0 {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	code, _, errOut = runSelf(t, context.Background(), []string{"-np", "1"}, "trust", envJoin+"=bare")
	if code != 91 || !strings.Contains(errOut, "not authenticated") {
		t.Fatalf("process without the inherited secret: exit %d, stderr:\n%s", code, errOut)
	}
	t.Setenv("IBIS_POOL_SECRET", "also") // two secrets: refuse to start
	code, _, errOut = runSelf(t, context.Background(), []string{"-np", "1"}, "trust")
	if code != exitFailure || !strings.Contains(errOut, "give one") {
		t.Fatalf("two secrets in the environment: exit %d, stderr:\n%s", code, errOut)
	}
}

// TestSecretAndTLSNeedEmbeddedRegistry: -secret and -tls with -registry are usage errors.
func TestSecretAndTLSNeedEmbeddedRegistry(t *testing.T) {
	for _, flag := range []string{"-secret", "-tls"} {
		code, _, errOut := runSelf(t, context.Background(), []string{"-np", "1", "-registry", "127.0.0.1:9", flag}, "trust")
		if code != exitUsage || !strings.Contains(errOut, flag) || !strings.Contains(errOut, "external") {
			t.Fatalf("%s with -registry: exit %d, stderr:\n%s", flag, code, errOut)
		}
	}
}
