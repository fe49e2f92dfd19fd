package registry_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/internal/etcdtest"
	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/registry"
)

// A front end reaches an etcd that takes only TLS clients with certificates of
// its CA and has authentication on, as the user ibis, allowed the registry's
// prefix alone; and one that gets any of it wrong never serves, its Ready saying
// what etcd refused.
func TestEtcdOverTLSWithLogin(t *testing.T) {
	eps, files, tc := etcdtest.EmbeddedTLS(t)
	stranger, err := tlsconf.Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	etcdtest.EnableAuth(t, eps, tc, "ibis", "s3cret", "/ibis/registry/")

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
