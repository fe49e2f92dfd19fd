package tlsconf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEtcdClientChecksTheServerAndShowsItsCertificate(t *testing.T) {
	f, err := Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	server, err := f.Server() // requires a client certificate of f's CA, as etcd's --client-cert-auth
	if err != nil {
		t.Fatal(err)
	}
	dial := func(c Files, name string) (serr, cerr error) {
		cfg, err := c.Etcd()
		if err != nil {
			t.Fatal(err)
		}
		cfg.ServerName = name // what gRPC sets from the endpoint
		return handshake(t, server, cfg)
	}

	if serr, cerr := dial(f, "127.0.0.1"); serr != nil || cerr != nil {
		t.Fatalf("right CA and certificate: server %v, client %v", serr, cerr)
	}
	if _, cerr := dial(f, "etcd.example"); cerr == nil || !strings.Contains(cerr.Error(), "etcd.example") {
		t.Fatalf("a name the certificate does not list: client %v, want the name checked", cerr)
	}
	if _, cerr := dial(Files{CA: other.CA, Cert: f.Cert, Key: f.Key}, "127.0.0.1"); cerr == nil || !strings.Contains(cerr.Error(), "certificate") {
		t.Fatalf("another CA: client %v, want etcd's certificate refused", cerr)
	}
	if serr, _ := dial(Files{CA: f.CA}, "127.0.0.1"); serr == nil {
		t.Fatal("no client certificate: the server took the connection")
	}
}

func TestEtcdConfigErrors(t *testing.T) {
	f, err := Generate(t.TempDir(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "empty.pem")
	if err := os.WriteFile(empty, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		files Files
		want  string
	}{
		{Files{Cert: f.Cert}, "needs its key"},
		{Files{Key: f.Key}, "needs its key"},
		{Files{Cert: f.Cert, Key: f.CA}, f.Cert},
		{Files{CA: filepath.Join(t.TempDir(), "missing.pem")}, "missing.pem"},
		{Files{CA: empty}, "holds no PEM certificate"},
	} {
		_, err := c.files.Etcd()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want ErrConfig saying %q", c.files, err, c.want)
		}
	}
	if cfg, err := (Files{}).Etcd(); err != nil || cfg.RootCAs != nil || len(cfg.Certificates) != 0 {
		t.Fatalf("no files: %v, %+v; want the system's roots and no certificate", err, cfg)
	}
}
