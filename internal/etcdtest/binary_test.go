package etcdtest

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/internal/selfexec"
)

// noEtcdEnv makes TestMissingEtcd the child that looks for etcd where there is none.
const noEtcdEnv = "IBIS_ETCDTEST_NO_ETCD"

// TestMissingEtcd runs StartCluster without an etcd binary in a child test binary:
// the test is skipped with the install hint, and fails where RequireEnv is 1.
func TestMissingEtcd(t *testing.T) {
	if os.Getenv(noEtcdEnv) != "" {
		debianEtcd = "/nonexistent/etcd"
		t.Setenv("PATH", t.TempDir())
		StartCluster(t, 1)
		t.Fatal("StartCluster returned without etcd")
	}
	if !clusterSupported {
		t.Skip("etcd clusters need Linux")
	}
	for _, tc := range []struct {
		require  string
		wantFail bool
		want     string
	}{
		{"", false, "apt-get install etcd-server"},
		{"1", true, RequireEnv + "=1 requires it"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		child, err := selfexec.Run(ctx, []string{"-test.run=^TestMissingEtcd$", "-test.count=1", "-test.v"},
			selfexec.WithoutEnv(RequireEnv), selfexec.WithEnv(noEtcdEnv+"=1", RequireEnv+"="+tc.require))
		cancel()
		if child == nil { // Run's error is the exit status when the child ran
			t.Fatal(err)
		}
		out := child.Output()
		failed := child.ExitCode() != 0
		if failed != tc.wantFail || !strings.Contains(out, tc.want) {
			t.Errorf("%s=%q: child failed=%v, want %v, and its output should say %q:\n%s",
				RequireEnv, tc.require, failed, tc.wantFail, tc.want, out)
		}
		if !tc.wantFail && !strings.Contains(out, "--- SKIP") {
			t.Errorf("%s=%q: child did not skip:\n%s", RequireEnv, tc.require, out)
		}
	}
}
