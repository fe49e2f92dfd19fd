// Package poolauth proves, in both directions, that the two ends of a connection know a
// pool's secret, without the secret crossing the wire. The registry and every data
// connection (tcp, nio) use it before they read anything else from a peer.
//
// The exchange is a mutual challenge-response over fresh nonces:
//
//  1. the accepting side (server) sends a fresh nonce Ns;
//  2. the dialling side (client) answers with its own fresh nonce Nc and
//     ClientProof = HMAC-SHA256(secret, label | "c" | pool | Ns | Nc);
//  3. the server checks it and answers with ServerProof = HMAC-SHA256(secret, label | "s" |
//     pool | Ns | Nc), which the client checks.
//
// A proof binds both nonces, the pool name and the direction: a recorded client answer
// fails against the next server's fresh Ns (no replay), a server's proof cannot be
// reflected back as a client's, and a proof for one pool is worthless for another.
// The label versions the construction.
package poolauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Sizes on the wire.
const (
	// NonceSize is the size of a nonce: 256 random bits, so that a nonce never repeats.
	NonceSize = 32
	// ProofSize is the size of a proof (an HMAC-SHA256).
	ProofSize = sha256.Size
	// MaxSecretSize bounds a secret (and the file it is read from), so that a wrong path
	// (a device, a huge log) is an error rather than a long read.
	MaxSecretSize = 4096
)

// label starts every MAC input: it names the construction and its version.
const label = "ibis-go pool auth v1"

// ErrUnauthenticated: the peer could not prove it knows the pool's secret (a wrong or
// missing secret, a replayed handshake), or this side has no secret where the peer
// requires one. ipl and registry re-export it.
var ErrUnauthenticated = errors.New("ibis: not authenticated for the pool")

// Secret is a pool's shared secret. The zero value is "no secret": the pool is open.
type Secret struct {
	key []byte
}

// New returns the secret with the given bytes (empty: no secret).
func New(key []byte) Secret {
	if len(key) == 0 {
		return Secret{}
	}
	return Secret{key: append([]byte(nil), key...)}
}

// Load returns the secret given directly (value) or in a file (path), as IBIS_POOL_SECRET
// and IBIS_POOL_SECRET_FILE give them; both empty is no secret, both set is an error (a
// configuration that says two things). The file's trailing newlines are dropped, so that
// `echo secret > file` works; it must not be larger than MaxSecretSize nor empty.
func Load(value, path string) (Secret, error) {
	switch {
	case value != "" && path != "":
		return Secret{}, errors.New("poolauth: both a secret and a secret file are given; give one")
	case value != "":
		if len(value) > MaxSecretSize {
			return Secret{}, fmt.Errorf("poolauth: the secret has %d bytes, more than %d", len(value), MaxSecretSize)
		}
		return New([]byte(value)), nil
	case path == "":
		return Secret{}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return Secret{}, fmt.Errorf("poolauth: reading the secret file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSecretSize+1))
	if err != nil {
		return Secret{}, fmt.Errorf("poolauth: reading the secret file %s: %w", path, err)
	}
	if len(b) > MaxSecretSize {
		return Secret{}, fmt.Errorf("poolauth: the secret file %s is larger than %d bytes", path, MaxSecretSize)
	}
	key := strings.TrimRight(string(b), "\r\n")
	if key == "" {
		return Secret{}, fmt.Errorf("poolauth: the secret file %s is empty", path)
	}
	return New([]byte(key)), nil
}

// Bytes returns a copy of the secret's bytes, to hand it to another layer's
// configuration (an Ibis instance configures its embedded registry with it).
func (s Secret) Bytes() []byte { return append([]byte(nil), s.key...) }

// IsSet reports whether there is a secret (the pool is closed to those without it).
func (s Secret) IsSet() bool { return len(s.key) > 0 }

// Equal reports whether two secrets are the same, in constant time.
func (s Secret) Equal(o Secret) bool { return hmac.Equal(s.key, o.key) }

// String never shows the secret, so that a secret logged or printed by mistake stays one.
func (s Secret) String() string {
	if s.IsSet() {
		return "secret(set)"
	}
	return "secret(none)"
}

// Nonce is a fresh random challenge.
type Nonce [NonceSize]byte

// NewNonce returns a nonce from the operating system's random source.
func NewNonce() (Nonce, error) {
	var n Nonce
	if _, err := rand.Read(n[:]); err != nil {
		return n, fmt.Errorf("poolauth: random nonce: %w", err)
	}
	return n, nil
}

// Proof is an HMAC that one side sends to show it knows the secret.
type Proof [ProofSize]byte

// role separates the two directions' proofs.
type role byte

const (
	roleClient role = 'c'
	roleServer role = 's'
)

func (s Secret) proof(r role, pool string, server, client Nonce) Proof {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(label))
	m.Write([]byte{byte(r)})
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(pool)))
	m.Write(n[:])
	m.Write([]byte(pool))
	m.Write(server[:])
	m.Write(client[:])
	var p Proof
	copy(p[:], m.Sum(nil))
	return p
}

// ClientProof is the dialling side's answer to the server's nonce.
func (s Secret) ClientProof(pool string, server, client Nonce) Proof {
	return s.proof(roleClient, pool, server, client)
}

// ServerProof is the accepting side's answer, once the client's proof checked out.
func (s Secret) ServerProof(pool string, server, client Nonce) Proof {
	return s.proof(roleServer, pool, server, client)
}

// CheckClient returns nil if p is the client proof for these nonces, else an error
// matching ErrUnauthenticated. The comparison takes constant time.
func (s Secret) CheckClient(pool string, server, client Nonce, p Proof) error {
	want := s.proof(roleClient, pool, server, client)
	if !hmac.Equal(want[:], p[:]) {
		return fmt.Errorf("%w: the client's proof for pool %q is wrong (a wrong secret, or a replayed handshake)", ErrUnauthenticated, pool)
	}
	return nil
}

// CheckServer returns nil if p is the server proof for these nonces, else an error
// matching ErrUnauthenticated.
func (s Secret) CheckServer(pool string, server, client Nonce, p Proof) error {
	want := s.proof(roleServer, pool, server, client)
	if !hmac.Equal(want[:], p[:]) {
		return fmt.Errorf("%w: the server's proof for pool %q is wrong (it does not know the pool's secret)", ErrUnauthenticated, pool)
	}
	return nil
}
