package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/ibisgo/ibis/registry"
)

// etcdScheme begins a -store value that names an etcd cluster.
const etcdScheme = "etcd://"

// parseStore reads the -store flag: "memory" (nil endpoints) or
// etcd://host:port[,host:port...] (the endpoints).
func parseStore(v string) ([]string, error) {
	if v == "memory" {
		return nil, nil
	}
	rest, ok := strings.CutPrefix(v, etcdScheme)
	if !ok {
		return nil, fmt.Errorf("-store %q: want memory or %sHOST:PORT[,HOST:PORT...]", v, etcdScheme)
	}
	var eps []string
	for _, ep := range strings.Split(rest, ",") {
		ep = strings.TrimSpace(ep)
		host, port, err := net.SplitHostPort(ep)
		if err != nil || host == "" {
			return nil, fmt.Errorf("-store %q: etcd endpoint %q is not HOST:PORT", v, ep)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("-store %q: etcd endpoint %q has no port number (1-65535)", v, ep)
		}
		eps = append(eps, ep)
	}
	return eps, nil
}

// The environment variables of etcd's password, read where -etcd-password-file
// is not given, so that it never stands on a command line.
const (
	envEtcdPassword     = "IBIS_ETCD_PASSWORD"
	envEtcdPasswordFile = "IBIS_ETCD_PASSWORD_FILE"
)

// etcdAccess turns the -etcd-* flags into server options, and says in a few words
// how the front end reaches etcd (for the line printed at start).
func etcdAccess(cfg config, getenv func(string) string) ([]registry.ServerOption, string, error) {
	secured := cfg.etcdTLS.IsSet() || cfg.etcdUser != "" || cfg.etcdPasswordFile != ""
	if len(cfg.etcd) == 0 {
		if secured {
			return nil, "", fmt.Errorf("-etcd-ca, -etcd-cert, -etcd-key, -etcd-user and -etcd-password-file need -store etcd://HOST:PORT[,...]")
		}
		return nil, "", nil
	}
	var opts []registry.ServerOption
	how := []string{"plain gRPC"}
	if cfg.etcdTLS.IsSet() {
		tc, err := cfg.etcdTLS.Etcd()
		if err != nil {
			return nil, "", fmt.Errorf("TLS to etcd (-etcd-ca, -etcd-cert, -etcd-key): %w", err)
		}
		opts = append(opts, registry.WithEtcdTLS(tc))
		how[0] = "TLS"
		if cfg.etcdTLS.CA == "" {
			how[0] = "TLS, etcd's certificate checked against the system's roots"
		}
		if cfg.etcdTLS.Cert != "" {
			how = append(how, "client certificate "+cfg.etcdTLS.Cert)
		}
	}
	file := cfg.etcdPasswordFile
	if file == "" {
		file = getenv(envEtcdPasswordFile)
	}
	password := getenv(envEtcdPassword)
	if cfg.etcdUser == "" {
		if file != "" || password != "" {
			return nil, "", fmt.Errorf("etcd's password is given (-etcd-password-file, $%s or $%s) but no -etcd-user",
				envEtcdPasswordFile, envEtcdPassword)
		}
		return opts, strings.Join(how, ", "), nil
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, "", fmt.Errorf("etcd's password (-etcd-password-file or $%s): %w", envEtcdPasswordFile, err)
		}
		password = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	}
	if password == "" {
		return nil, "", fmt.Errorf("-etcd-user %s: no password (-etcd-password-file, $%s or $%s; never on the command line)",
			cfg.etcdUser, envEtcdPasswordFile, envEtcdPassword)
	}
	opts = append(opts, registry.WithEtcdAuth(cfg.etcdUser, password))
	if !cfg.etcdTLS.IsSet() {
		how[0] = "plain gRPC: the password crosses the network in the clear"
	}
	how = append(how, "logged in as "+cfg.etcdUser)
	return opts, strings.Join(how, ", "), nil
}
