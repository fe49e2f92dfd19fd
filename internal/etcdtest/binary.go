package etcdtest

import (
	"os"
	"os/exec"
	"testing"
)

// RequireEnv names the environment variable that makes a missing etcd binary fail
// the test instead of skipping it. CI sets it, so that the fault tests cannot
// silently stop running there.
const RequireEnv = "IBIS_REQUIRE_ETCD"

// debianEtcd is where Debian's etcd-server package installs the server (a
// variable so that a test can take it away).
var debianEtcd = "/usr/bin/etcd"

// etcdBinary returns the etcd server binary to run, or skips the test (fails it
// where RequireEnv is 1) when there is none.
func etcdBinary(t testing.TB) string {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("etcdtest: %s, and %s=1 requires it", why, RequireEnv)
		}
		t.Skipf("etcdtest: %s; install it with `apt-get install etcd-server` to run this test", why)
	}
	if !clusterSupported {
		missing("etcd clusters of OS processes need Linux")
	}
	if _, err := os.Stat(debianEtcd); err == nil {
		return debianEtcd
	}
	if p, err := exec.LookPath("etcd"); err == nil {
		return p
	}
	missing("no etcd server binary (" + debianEtcd + " or etcd in PATH)")
	return ""
}
