package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// Etcd returns the configuration a registry front end dials etcd with: etcd's
// certificate checked the standard way, against the CA in f.CA (the system's roots when
// it is empty) and for the host name or IP address of the endpoint, as etcd's own
// clients do; and f.Cert with f.Key, when given, shown to an etcd that asks for client
// certificates (--client-cert-auth). Unlike a pool's connections, etcd is reached by
// names listed in advance, so its certificate names them.
func (f Files) Etcd() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	switch {
	case (f.Cert == "") != (f.Key == ""):
		return nil, fmt.Errorf("%w: a client certificate for etcd needs its key and the key its certificate (got cert %q, key %q)",
			ErrConfig, f.Cert, f.Key)
	case f.Cert != "":
		cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("%w: certificate %s and key %s: %w", ErrConfig, f.Cert, f.Key, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, fmt.Errorf("%w: CA: %w", ErrConfig, err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: CA file %s holds no PEM certificate", ErrConfig, f.CA)
		}
	}
	return cfg, nil
}
