package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/registry"
)

// The environment variables of the pool secret and of TLS, which every Ibis process
// reads (package ipl).
const (
	envSecret     = "IBIS_POOL_SECRET"
	envSecretFile = "IBIS_POOL_SECRET_FILE"
	envTLSCert    = "IBIS_TLS_CERT"
	envTLSKey     = "IBIS_TLS_KEY"
	envTLSCA      = "IBIS_TLS_CA"
)

// certLifetime is the lifetime of the throw-away certificates of -tls: the run may be
// long; the files are removed when it ends.
const certLifetime = 30 * 24 * time.Hour

// secretBytes is the size of the random secret of -secret: 256 bits.
const secretBytes = 32

// poolTrust is what the pool's processes and the embedded registry are given: the
// variables set and dropped in the processes' environment, and the registry's options.
type poolTrust struct {
	dir     string            // the private directory of -secret and -tls; "" if none
	set     map[string]string // variables every process gets
	drop    []string          // inherited variables every process loses
	options []registry.ServerOption
	// secured says how the pool is protected, for the line ibis-run prints at start
	// ("authenticated by ... and encrypted by ..."); "" for an open pool.
	secured string
}

// setupTrust prepares -secret and -tls, and, for an embedded registry, takes over the pool
// secret and TLS files that ibis-run's own environment gives (the processes inherit them,
// so the registry must agree with them). getenv reads ibis-run's environment. The caller
// removes t.dir when the pool has ended.
func setupTrust(s settings, getenv func(string) string) (t poolTrust, err error) {
	t.set = make(map[string]string)
	defer func() {
		if err != nil && t.dir != "" {
			_ = os.RemoveAll(t.dir)
			t.dir = ""
		}
	}()
	if s.secret || s.tls {
		// MkdirTemp makes the directory readable by its owner only.
		if t.dir, err = os.MkdirTemp("", "ibis-run-"); err != nil {
			return t, fmt.Errorf("private directory for -secret/-tls: %w", err)
		}
	}

	var secret poolauth.Secret
	switch {
	case s.secret:
		key := make([]byte, secretBytes)
		if _, err := rand.Read(key); err != nil {
			return t, fmt.Errorf("-secret: %w", err)
		}
		text := hex.EncodeToString(key)
		path := filepath.Join(t.dir, "pool-secret")
		if err := writePrivate(path, []byte(text+"\n")); err != nil {
			return t, fmt.Errorf("-secret: %w", err)
		}
		secret = poolauth.New([]byte(text))
		t.set[envSecretFile] = path
		t.drop = append(t.drop, envSecret)
	case s.registry == "":
		if secret, err = poolauth.Load(getenv(envSecret), getenv(envSecretFile)); err != nil {
			return t, fmt.Errorf("the pool secret in ibis-run's environment ($%s / $%s): %w", envSecret, envSecretFile, err)
		}
	}
	var secured []string
	if secret.IsSet() && s.registry == "" {
		t.options = append(t.options, registry.WithServerSecret(secret.Bytes()))
		secured = append(secured, "authenticated by a pool secret")
	}

	var files tlsconf.Files
	switch {
	case s.tls:
		if files, err = tlsconf.Generate(t.dir, certLifetime); err != nil {
			return t, fmt.Errorf("-tls: %w", err)
		}
		t.set[envTLSCert], t.set[envTLSKey], t.set[envTLSCA] = files.Cert, files.Key, files.CA
	case s.registry == "":
		files = tlsconf.Files{Cert: getenv(envTLSCert), Key: getenv(envTLSKey), CA: getenv(envTLSCA)}
	}
	if files.IsSet() && s.registry == "" {
		cfg, err := files.Server()
		if err != nil {
			return t, fmt.Errorf("TLS files in ibis-run's environment ($%s, $%s, $%s): %w", envTLSCert, envTLSKey, envTLSCA, err)
		}
		t.options = append(t.options, registry.WithServerTLS(cfg))
		ca := "a throw-away CA"
		if !s.tls {
			ca = "the CA " + files.CA
		}
		secured = append(secured, "encrypted by TLS 1.3 (registry and tcp connections) with certificates of "+ca)
	}
	t.secured = strings.Join(secured, " and ")
	return t, nil
}

// writePrivate creates path, readable and writable by its owner only, with data.
func writePrivate(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
