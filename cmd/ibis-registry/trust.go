package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/registry"
)

// The environment variables of the pool secret and of TLS, the same that
// every Ibis process reads (package ipl), so that one environment serves a
// cluster job's registry and its processes alike.
const (
	envSecret     = "IBIS_POOL_SECRET"
	envSecretFile = "IBIS_POOL_SECRET_FILE"
	envTLSCert    = "IBIS_TLS_CERT"
	envTLSKey     = "IBIS_TLS_KEY"
	envTLSCA      = "IBIS_TLS_CA"
)

// maxPoolSecretsFile bounds the -pool-secrets file, so that a wrong path (a
// device, a huge log) is an error rather than a long read.
const maxPoolSecretsFile = 1 << 20

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
	var parts []string

	var secret poolauth.Secret
	var err error
	if cfg.secretFile != "" {
		secret, err = loadSecretFile(cfg.secretFile)
	} else {
		if path := getenv(envSecretFile); path != "" && getenv(envSecret) == "" {
			if err := checkPrivate(path); err != nil {
				return t, fmt.Errorf("$%s: %w", envSecretFile, err)
			}
		}
		secret, err = poolauth.Load(getenv(envSecret), getenv(envSecretFile))
		if err != nil {
			err = fmt.Errorf("the pool secret from $%s / $%s: %w", envSecret, envSecretFile, err)
		}
	}
	if err != nil {
		return t, err
	}
	if secret.IsSet() {
		t.options = append(t.options, registry.WithServerSecret(secret.Bytes()))
		parts = append(parts, "a secret for every pool")
		t.authenticated = true
	}

	if cfg.poolSecrets != "" {
		secrets, err := loadPoolSecrets(cfg.poolSecrets)
		if err != nil {
			return t, err
		}
		t.options = append(t.options, registry.WithPoolSecrets(secrets))
		t.authenticated = true
		if secret.IsSet() {
			parts = append(parts, fmt.Sprintf("secrets of their own for %d pools", len(secrets)))
		} else {
			parts = append(parts, fmt.Sprintf("secrets for %d pools, which alone are served", len(secrets)))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "no pool secret: any client that reaches the port may join any pool")
	}

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

// loadSecretFile reads the secret of -secret-file.
func loadSecretFile(path string) (poolauth.Secret, error) {
	if err := checkPrivate(path); err != nil {
		return poolauth.Secret{}, fmt.Errorf("-secret-file: %w", err)
	}
	s, err := poolauth.Load("", path)
	if err != nil {
		return poolauth.Secret{}, fmt.Errorf("-secret-file: %w", err)
	}
	return s, nil
}

// checkPrivate refuses a secrets file that every user of the machine can
// read or write: the secret would be no secret.
func checkPrivate(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if st.Mode().Perm()&0o007 != 0 {
		return fmt.Errorf("%s can be read or written by every user (mode %v): take those rights away (chmod o-rwx, or 600)",
			path, st.Mode().Perm())
	}
	return nil
}

// loadPoolSecrets reads a -pool-secrets file: one pool per line, its name
// and its secret separated by white space (the secret is the rest of the
// line, without surrounding white space); blank lines and lines that begin
// with # are skipped. A pool may appear once; names and secrets may not be
// empty, a name at most registry.MaxPoolName bytes, a secret at most
// poolauth.MaxSecretSize; the file at most 1 MiB.
func loadPoolSecrets(path string) (map[string][]byte, error) {
	fail := func(err error) (map[string][]byte, error) {
		return nil, fmt.Errorf("-pool-secrets %s: %w", path, err)
	}
	if err := checkPrivate(path); err != nil {
		return fail(err)
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPoolSecretsFile+1))
	if err != nil {
		return fail(err)
	}
	if len(data) > maxPoolSecretsFile {
		return fail(fmt.Errorf("larger than %d bytes", maxPoolSecretsFile))
	}
	secrets := make(map[string][]byte)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxPoolSecretsFile)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		pool, secret := line, ""
		if i := strings.IndexFunc(line, unicode.IsSpace); i >= 0 {
			pool, secret = line[:i], strings.TrimSpace(line[i:])
		}
		switch {
		case secret == "":
			return fail(fmt.Errorf("line %d: pool %q has no secret (want `pool secret`)", n, pool))
		case len(pool) > registry.MaxPoolName:
			return fail(fmt.Errorf("line %d: a pool name of %d bytes, more than %d", n, len(pool), registry.MaxPoolName))
		case len(secret) > poolauth.MaxSecretSize:
			return fail(fmt.Errorf("line %d: the secret of pool %q has %d bytes, more than %d", n, pool, len(secret), poolauth.MaxSecretSize))
		}
		if _, dup := secrets[pool]; dup {
			return fail(fmt.Errorf("line %d: pool %q is listed twice", n, pool))
		}
		secrets[pool] = []byte(secret)
	}
	if err := sc.Err(); err != nil {
		return fail(err)
	}
	if len(secrets) == 0 {
		return fail(errors.New("lists no pool"))
	}
	return secrets, nil
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
`

// usage prints the flags and the notes on trust.
func usage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprintf(w, "Usage of ibis-registry:\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, usageTrust)
}
