package registry_test

import (
	"crypto/tls"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/etcdtest"
	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/registry"
)

// A front end reaches an etcd that takes only TLS clients with certificates of
// its CA and has authentication on, as the user ibis, allowed the registry's
// prefix alone; and one that gets any of it wrong never serves, its Ready saying
// what etcd refused.
func TestEtcdOverTLSWithLogin(t *testing.T) {
	files, err := tlsconf.Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := tlsconf.Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	eps := etcdtest.Embedded(t, etcdtest.WithClientTLS(files.Cert, files.Key, files.CA))
	tc, err := files.Etcd()
	if err != nil {
		t.Fatal(err)
	}
	enableAuth(t, eps, tc, "ibis", "s3cret")

	good := startReady(t, registry.WithEtcdStore(eps), registry.WithEtcdTLS(tc), registry.WithEtcdAuth("ibis", "s3cret"))
	m := join(t, good, "tls")
	if w, err := m.Elect(testContext(t), "leader"); err != nil || w != m.Identity() {
		t.Fatalf("elect over TLS with a login: %v, %v", w, err)
	}

	strangerTLS, err := stranger.Etcd()
	if err != nil {
		t.Fatal(err)
	}
	noCert, err := tlsconf.Files{CA: files.CA}.Etcd()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opts []registry.ServerOption
		want string
	}{
		{"plain gRPC", []registry.ServerOption{registry.WithEtcdAuth("ibis", "s3cret")}, "takes TLS clients only"},
		{"another CA", []registry.ServerOption{registry.WithEtcdTLS(strangerTLS), registry.WithEtcdAuth("ibis", "s3cret")}, "certificate signed by unknown authority"},
		{"no client certificate", []registry.ServerOption{registry.WithEtcdTLS(noCert), registry.WithEtcdAuth("ibis", "s3cret")}, "certificate required"},
		{"wrong password", []registry.ServerOption{registry.WithEtcdTLS(tc), registry.WithEtcdAuth("ibis", "guess")}, "authentication failed"},
		{"no login", []registry.ServerOption{registry.WithEtcdTLS(tc)}, "permission denied"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, append(c.opts, registry.WithEtcdStore(eps))...)
			deadline := time.Now().Add(testTimeout)
			for {
				err := s.Ready()
				if err == nil {
					t.Fatal("front end serves")
				}
				if strings.Contains(err.Error(), c.want) && !strings.Contains(err.Error(), "reading the registry's state") {
					t.Logf("Ready: %v", err)
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("Ready: %v; want it to say %q", err, c.want)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// enableAuth turns etcd's authentication on with a root user and a user allowed
// to read and write the registry's prefix only.
func enableAuth(t *testing.T, eps []string, tc *tls.Config, user, password string) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, TLS: tc, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := testContext(t)
	steps := []func() error{
		func() error { _, err := cli.RoleAdd(ctx, "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "root", "root-"+password); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.RoleAdd(ctx, "ibis-registry"); return err },
		func() error {
			_, err := cli.RoleGrantPermission(ctx, "ibis-registry", "/ibis/registry/", clientv3.GetPrefixRangeEnd("/ibis/registry/"),
				clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error { _, err := cli.UserAdd(ctx, user, password); return err },
		func() error { _, err := cli.UserGrantRole(ctx, user, "ibis-registry"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("etcd auth setup, step %d: %v", i, err)
		}
	}
}
