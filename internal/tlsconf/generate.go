package tlsconf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Generate writes a throw-away CA and one certificate signed by it (for both client and
// server use, valid for 127.0.0.1, ::1 and localhost, for the given lifetime) into dir,
// as ca.pem, cert.pem and key.pem (the key readable by the owner only), and returns
// their names. It is what ibis-run -tls uses to encrypt a local pool with one command;
// a cluster's pool should have its own CA (docs/SECURITY.md).
func Generate(dir string, lifetime time.Duration) (Files, error) {
	now := time.Now()
	caSerial, err := serial()
	if err != nil {
		return Files{}, err
	}
	certSerial, err := serial()
	if err != nil {
		return Files{}, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Files{}, fmt.Errorf("tlsconf: CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          caSerial,
		Subject:               pkix.Name{CommonName: "ibis-go throw-away pool CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(lifetime),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return Files{}, fmt.Errorf("tlsconf: CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return Files{}, fmt.Errorf("tlsconf: CA certificate: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Files{}, fmt.Errorf("tlsconf: key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: certSerial,
		Subject:      pkix.Name{CommonName: "ibis-go pool member"},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(lifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return Files{}, fmt.Errorf("tlsconf: certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Files{}, fmt.Errorf("tlsconf: key: %w", err)
	}
	f := Files{Cert: filepath.Join(dir, "cert.pem"), Key: filepath.Join(dir, "key.pem"), CA: filepath.Join(dir, "ca.pem")}
	for _, w := range []struct {
		path, kind string
		der        []byte
		mode       os.FileMode
	}{
		{f.CA, "CERTIFICATE", caDER, 0o644},
		{f.Cert, "CERTIFICATE", der, 0o644},
		{f.Key, "PRIVATE KEY", keyDER, 0o600},
	} {
		data := pem.EncodeToMemory(&pem.Block{Type: w.kind, Bytes: w.der})
		if err := os.WriteFile(w.path, data, w.mode); err != nil {
			return Files{}, fmt.Errorf("tlsconf: %w", err)
		}
	}
	return f, nil
}

// serial returns a random 128-bit certificate serial number.
func serial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("tlsconf: random serial: %w", err)
	}
	return n, nil
}
