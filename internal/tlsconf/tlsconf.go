// Package tlsconf builds the crypto/tls configurations of a pool's registry and data
// connections from a certificate, its key and the pool's CA, and makes throw-away ones
// for a local pool (ibis-run -tls).
//
// Trust model: the CA is the pool's trust domain. Both ends present a certificate and
// both check the other's against the CA (mutual authentication); any certificate the CA
// signed is a member. Host names are not checked: grid nodes are reached by addresses
// that the registry hands out, not by names a certificate could list in advance, and
// whoever holds a key the pool's CA signed is trusted anyway. Only TLS 1.3 is spoken.
package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// ErrConfig wraps every error of an incomplete or unreadable TLS configuration.
var ErrConfig = errors.New("tls configuration")

// Files names the PEM files of one process's TLS identity, as IBIS_TLS_CERT,
// IBIS_TLS_KEY and IBIS_TLS_CA give them.
type Files struct {
	Cert string // the process's certificate (may hold the chain)
	Key  string // its private key
	CA   string // the pool's CA certificate(s): the peers' certificates must chain to it
}

// IsSet reports whether TLS is asked for (any file named).
func (f Files) IsSet() bool { return f.Cert != "" || f.Key != "" || f.CA != "" }

// load reads the key pair and the CA pool, or says which file is missing or bad.
func (f Files) load() (tls.Certificate, *x509.CertPool, error) {
	if f.Cert == "" || f.Key == "" || f.CA == "" {
		return tls.Certificate{}, nil, fmt.Errorf("%w: TLS needs a certificate, its key and the CA (got cert %q, key %q, ca %q)",
			ErrConfig, f.Cert, f.Key, f.CA)
	}
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("%w: certificate %s and key %s: %w", ErrConfig, f.Cert, f.Key, err)
	}
	pem, err := os.ReadFile(f.CA)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("%w: CA: %w", ErrConfig, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return tls.Certificate{}, nil, fmt.Errorf("%w: CA file %s holds no PEM certificate", ErrConfig, f.CA)
	}
	return cert, pool, nil
}

// Server returns the configuration of the accepting side: TLS 1.3, its certificate, and
// a client certificate required and checked against the CA.
func (f Files) Server() (*tls.Config, error) {
	cert, pool, err := f.load()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
	}, nil
}

// Client returns the configuration of the dialling side: TLS 1.3, its certificate for
// the server to check, and the server's certificate checked against the CA (the chain
// only, not the host name: see the package doc).
func (f Files) Client() (*tls.Config, error) {
	cert, pool, err := f.load()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		// The standard verification checks the host name too; VerifyConnection below
		// does the chain check against the pool's CA instead.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			return verifyChain(cs.PeerCertificates, pool, x509.ExtKeyUsageServerAuth)
		},
	}, nil
}

// verifyChain checks that the peer's certificate chains to the pool's CA.
func verifyChain(certs []*x509.Certificate, roots *x509.CertPool, usage x509.ExtKeyUsage) error {
	if len(certs) == 0 {
		return errors.New("tlsconf: the peer sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{usage}})
	if err != nil {
		return fmt.Errorf("tlsconf: the peer's certificate is not one of the pool's: %w", err)
	}
	return nil
}
