package etcdtest

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/tlsconf"
)

// EnableAuth turns the authentication of the etcd at endpoints on (reached with tc,
// nil for plain gRPC), with a root user whose password is "root-"+password, and,
// when prefix is not empty, user with password, allowed to read and write the keys
// under prefix alone; root otherwise gets password itself.
func EnableAuth(t testing.TB, endpoints []string, tc *tls.Config, user, password, prefix string) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, TLS: tc, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("etcdtest: client: %v", err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rootPassword := password
	if prefix != "" {
		rootPassword = "root-" + password
	}
	steps := []func() error{
		func() error { _, err := cli.RoleAdd(ctx, "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "root", rootPassword); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
	}
	if prefix != "" {
		steps = append(steps,
			func() error { _, err := cli.RoleAdd(ctx, user); return err },
			func() error {
				_, err := cli.RoleGrantPermission(ctx, user, prefix, clientv3.GetPrefixRangeEnd(prefix),
					clientv3.PermissionType(clientv3.PermReadWrite))
				return err
			},
			func() error { _, err := cli.UserAdd(ctx, user, password); return err },
			func() error { _, err := cli.UserGrantRole(ctx, user, user); return err },
		)
	}
	steps = append(steps, func() error { _, err := cli.AuthEnable(ctx); return err })
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("etcdtest: turning authentication on, step %d: %v", i+1, err)
		}
	}
}

// EmbeddedTLS is Embedded taking TLS clients only: a throw-away CA and a certificate
// of it (tlsconf.Generate) serve etcd and are what its clients must show. It returns
// the endpoints, the files and a client configuration with them (tlsconf.Files.Etcd).
func EmbeddedTLS(t testing.TB, opts ...EmbeddedOption) ([]string, tlsconf.Files, *tls.Config) {
	t.Helper()
	files, err := tlsconf.Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatalf("etcdtest: certificates: %v", err)
	}
	eps := Embedded(t, append(opts, WithClientTLS(files.Cert, files.Key, files.CA))...)
	tc, err := files.Etcd()
	if err != nil {
		t.Fatalf("etcdtest: client TLS: %v", err)
	}
	return eps, files, tc
}
