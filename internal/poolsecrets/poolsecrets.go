// Package poolsecrets loads the pool secrets a server is told of (ibis-registry,
// ibis-hub): a secret for every pool from -secret-file or the environment, and secrets
// of their own for some pools from a -pool-secrets file. It refuses files every user
// of the machine may read, since such a secret is no secret.
package poolsecrets

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	"github.com/ibisgo/ibis/internal/poolauth"
)

// The environment variables of the pool secret, the same that every Ibis process
// reads (package ipl).
const (
	EnvSecret     = "IBIS_POOL_SECRET"
	EnvSecretFile = "IBIS_POOL_SECRET_FILE"
)

// MaxPoolSecretsFile bounds a -pool-secrets file, so that a wrong path (a device, a
// huge log) is an error rather than a long read.
const MaxPoolSecretsFile = 1 << 20

// Secrets is what a server is told: a secret for every pool (Every, maybe none) and
// secrets of their own for some pools (Pools, maybe none).
type Secrets struct {
	Every poolauth.Secret
	Pools map[string][]byte
}

// Load reads the secret for every pool from secretFile (the -secret-file flag) or,
// when that is empty, from $IBIS_POOL_SECRET or $IBIS_POOL_SECRET_FILE (getenv), and
// the per-pool secrets from poolSecretsFile (the -pool-secrets flag; empty: none).
func Load(secretFile, poolSecretsFile string, getenv func(string) string) (Secrets, error) {
	var s Secrets
	var err error
	if secretFile != "" {
		s.Every, err = LoadSecretFile(secretFile)
	} else {
		if path := getenv(EnvSecretFile); path != "" && getenv(EnvSecret) == "" {
			if err := CheckPrivate(path); err != nil {
				return s, fmt.Errorf("$%s: %w", EnvSecretFile, err)
			}
		}
		s.Every, err = poolauth.Load(getenv(EnvSecret), getenv(EnvSecretFile))
		if err != nil {
			err = fmt.Errorf("the pool secret from $%s / $%s: %w", EnvSecret, EnvSecretFile, err)
		}
	}
	if err != nil {
		return s, err
	}
	if poolSecretsFile != "" {
		if s.Pools, err = LoadPoolFile(poolSecretsFile); err != nil {
			return s, err
		}
	}
	return s, nil
}

// Authenticated reports whether a client must know a secret.
func (s Secrets) Authenticated() bool { return s.Every.IsSet() || len(s.Pools) > 0 }

// Summary says in a few words what the secrets are, for a server's headline.
func (s Secrets) Summary() string {
	var parts []string
	if s.Every.IsSet() {
		parts = append(parts, "a secret for every pool")
	}
	if len(s.Pools) > 0 {
		if s.Every.IsSet() {
			parts = append(parts, fmt.Sprintf("secrets of their own for %d pools", len(s.Pools)))
		} else {
			parts = append(parts, fmt.Sprintf("secrets for %d pools, which alone are served", len(s.Pools)))
		}
	}
	if len(parts) == 0 {
		return "no pool secret: any client that reaches the port may join any pool"
	}
	return strings.Join(parts, "; ")
}

// Lookup returns the secrets as a poolauth.Lookup, or nil when there are none (an
// open server). A listed pool takes only its own secret; another pool takes the
// secret for every pool, and without one it is not served.
func (s Secrets) Lookup() poolauth.Lookup {
	if !s.Authenticated() {
		return nil
	}
	pools := make(map[string]poolauth.Secret, len(s.Pools))
	for p, k := range s.Pools {
		pools[p] = poolauth.New(k)
	}
	every := s.Every
	return func(pool string) (poolauth.Secret, bool) {
		if k, ok := pools[pool]; ok {
			return k, true
		}
		return every, every.IsSet()
	}
}

// LoadSecretFile reads the secret of -secret-file.
func LoadSecretFile(path string) (poolauth.Secret, error) {
	if err := CheckPrivate(path); err != nil {
		return poolauth.Secret{}, fmt.Errorf("-secret-file: %w", err)
	}
	s, err := poolauth.Load("", path)
	if err != nil {
		return poolauth.Secret{}, fmt.Errorf("-secret-file: %w", err)
	}
	return s, nil
}

// CheckPrivate refuses a secrets file that every user of the machine can read or
// write: the secret would be no secret.
func CheckPrivate(path string) error {
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

// LoadPoolFile reads a -pool-secrets file: one pool per line, its name and its secret
// separated by white space (the secret is the rest of the line, without surrounding
// white space); blank lines and lines that begin with # are skipped. A pool may appear
// once; names and secrets may not be empty, a name at most poolauth.MaxPoolName bytes,
// a secret at most poolauth.MaxSecretSize; the file at most MaxPoolSecretsFile.
func LoadPoolFile(path string) (map[string][]byte, error) {
	fail := func(err error) (map[string][]byte, error) {
		return nil, fmt.Errorf("-pool-secrets %s: %w", path, err)
	}
	if err := CheckPrivate(path); err != nil {
		return fail(err)
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxPoolSecretsFile+1))
	if err != nil {
		return fail(err)
	}
	if len(data) > MaxPoolSecretsFile {
		return fail(fmt.Errorf("larger than %d bytes", MaxPoolSecretsFile))
	}
	secrets := make(map[string][]byte)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), MaxPoolSecretsFile)
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
		case len(pool) > poolauth.MaxPoolName:
			return fail(fmt.Errorf("line %d: a pool name of %d bytes, more than %d", n, len(pool), poolauth.MaxPoolName))
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
