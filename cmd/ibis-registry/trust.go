package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ibisgo/ibis/internal/poolsecrets"
	"github.com/ibisgo/ibis/registry"
)

// The environment variables of the pool secret and of TLS, the same that
// every Ibis process reads (package ipl), so that one environment serves a
// cluster job's registry and its processes alike.
const (
	envSecret     = poolsecrets.EnvSecret
	envSecretFile = poolsecrets.EnvSecretFile
	envTLSCert    = "IBIS_TLS_CERT"
	envTLSKey     = "IBIS_TLS_KEY"
	envTLSCA      = "IBIS_TLS_CA"
)

// trust is what the server is told about secrets and TLS.
type trust struct {
	options []registry.ServerOption
	summary string
	// authenticated: a client must know a pool secret or hold a certificate of the CA;
	// encrypted: TLS.
	authenticated, encrypted bool
}

// headline is the line printed at start that says whether the pools are secured, and how.
func (t trust) headline() string {
	state := "OPEN (not authenticated, not encrypted)"
	switch {
	case t.authenticated && t.encrypted:
		state = "secured: authenticated and encrypted"
	case t.authenticated:
		state = "authenticated, not encrypted"
	}
	return fmt.Sprintf("ibis-registry pools: %s (%s)", state, t.summary)
}

// loadTrust reads the secrets and the TLS files that the flags name, or
// else the environment, and turns them into server options.
func loadTrust(cfg config, getenv func(string) string) (trust, error) {
	var t trust
	secrets, err := poolsecrets.Load(cfg.secretFile, cfg.poolSecrets, getenv)
	if err != nil {
		return t, err
	}
	if secrets.Every.IsSet() {
		t.options = append(t.options, registry.WithServerSecret(secrets.Every.Bytes()))
	}
	if len(secrets.Pools) > 0 {
		t.options = append(t.options, registry.WithPoolSecrets(secrets.Pools))
	}
	t.authenticated = secrets.Authenticated()
	parts := []string{secrets.Summary()}

	files := cfg.tls
	for _, f := range []struct {
		v   *string
		env string
	}{{&files.Cert, envTLSCert}, {&files.Key, envTLSKey}, {&files.CA, envTLSCA}} {
		if *f.v == "" {
			*f.v = getenv(f.env)
		}
	}
	if files.IsSet() {
		tc, err := files.Server()
		if err != nil {
			return t, fmt.Errorf("TLS (-tls-cert, -tls-key, -tls-ca or $%s, $%s, $%s): %w", envTLSCert, envTLSKey, envTLSCA, err)
		}
		t.options = append(t.options, registry.WithServerTLS(tc))
		parts = append(parts, "TLS 1.3 with client certificates of the CA "+files.CA)
		t.authenticated, t.encrypted = true, true
	} else {
		parts = append(parts, "no TLS")
	}
	t.summary = strings.Join(parts, "; ")
	return t, nil
}

const usageTrust = `
Trust (see docs/SECURITY.md and 'go doc registry'):

Without a secret and TLS the registry is open: anyone who can reach its port can
join any pool. A pool secret is checked by a mutual challenge-response before
anything else on a connection (it never crosses the wire); TLS 1.3 with client
certificates of the pool's CA encrypts the connections and keeps out anyone
without such a certificate. Use both on a network you do not control.

The secret is read from a file (-secret-file, or $IBIS_POOL_SECRET_FILE) or from
$IBIS_POOL_SECRET, never from the command line: every user of the machine can
read a command line in the process list (ps). The file must not be readable by
every user; its trailing newline is dropped. The processes of the pool read the
same variables.

-pool-secrets FILE gives pools secrets of their own, one pool per line:

    # pool   secret
    run42    e4b1c0f6a9...
    run43    91f07d2c5b...

A listed pool takes only its own secret. Other pools take the secret of every
pool if there is one; without one, the server serves the listed pools only.

TLS needs all three of -tls-cert, -tls-key and -tls-ca (or $IBIS_TLS_CERT,
$IBIS_TLS_KEY, $IBIS_TLS_CA); the processes of the pool use certificates of the
same CA. -max-pools-per-source and -max-members-per-source bound what one IP
address (loopback included) may hold.

With -store etcd://..., -etcd-ca has the front end speak TLS to etcd, checking
etcd's certificate against that CA; -etcd-cert and -etcd-key answer etcd's
--client-cert-auth; -etcd-user logs in to etcd's authentication, with the password
from -etcd-password-file, $IBIS_ETCD_PASSWORD_FILE or $IBIS_ETCD_PASSWORD (see
docs/REGISTRY-HA.md).
`

// usage prints the flags and the notes on trust.
func usage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprintf(w, "Usage of ibis-registry:\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, usageTrust)
}
