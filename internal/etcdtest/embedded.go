package etcdtest

import (
	"net/url"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// embeddedStartTimeout bounds how long Embedded waits for the server to be ready.
// A single node on a temp dir is ready in tens of milliseconds; the bound is generous
// so that a loaded machine cannot fail a test.
const embeddedStartTimeout = 60 * time.Second

// EmbeddedOption configures Embedded.
type EmbeddedOption func(*embeddedConfig)

type embeddedConfig struct {
	logger *zap.Logger
	fsync  bool
	tls    *transport.TLSInfo
}

// WithClientTLS has the server take clients over TLS only, with the certificate and
// key in the PEM files cert and key, and require of each client a certificate signed
// by the CA in ca (etcd's --cert-file, --key-file, --trusted-ca-file and
// --client-cert-auth).
func WithClientTLS(cert, key, ca string) EmbeddedOption {
	return func(c *embeddedConfig) {
		c.tls = &transport.TLSInfo{CertFile: cert, KeyFile: key, TrustedCAFile: ca, ClientCertAuth: true}
	}
}

// WithLogger sends the embedded server's log to lg (the default discards it).
func WithLogger(lg *zap.Logger) EmbeddedOption {
	return func(c *embeddedConfig) { c.logger = lg }
}

// WithFsync turns etcd's fsync of its log and database on (on=true) or off. The
// default is off: a unit test's server dies with its test, so durability buys
// nothing there, and fsync makes every write cost a disk flush.
func WithFsync(on bool) EmbeddedOption {
	return func(c *embeddedConfig) { c.fsync = on }
}

// Embedded starts one etcd server inside the test process, with its data in
// t.TempDir() and its client and peer listeners on ports the kernel picks, waits
// until it serves, and returns its client endpoints ("127.0.0.1:port"). The server
// is closed at t.Cleanup. Tests that check for goroutine leaks add GoleakIgnores().
func Embedded(t testing.TB, opts ...EmbeddedOption) []string {
	t.Helper()
	return StartEmbedded(t, opts...).Endpoints()
}

// EmbeddedServer is a running embedded etcd server.
type EmbeddedServer struct {
	etcd      *embed.Etcd
	endpoints []string
	stopOnce  sync.Once
}

// StartEmbedded is Embedded for a test that also needs the server itself, for
// instance to stop it while a client still uses it.
func StartEmbedded(t testing.TB, opts ...EmbeddedOption) *EmbeddedServer {
	t.Helper()
	c := embeddedConfig{logger: zap.NewNop()}
	for _, o := range opts {
		o(&c)
	}

	cfg := embed.NewConfig()
	cfg.Name = "etcdtest"
	cfg.Dir = t.TempDir()
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(c.logger)
	cfg.UnsafeNoFsync = !c.fsync
	// A single member elects itself after a random 1 to 2 election timeouts; with
	// etcd's 100 ms tick that made a start take up to 1.3 s. A 10 ms tick has it
	// serve in tens of milliseconds; with no peers, nothing else depends on it.
	cfg.TickMs = 10
	cfg.ElectionMs = 100
	// Port 0 everywhere: the listeners bind to ports the kernel picks and the real
	// client address is read back from them. A single member never dials its own
	// peer URL, so advertising port 0 there is harmless.
	local := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	client := local
	if c.tls != nil {
		client.Scheme = "https"
		cfg.ClientTLSInfo = *c.tls
	}
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{local}
	cfg.AdvertisePeerUrls = []url.URL{local}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("etcdtest: start embedded etcd: %v", err)
	}
	s := &EmbeddedServer{etcd: e}
	t.Cleanup(s.Stop)

	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		t.Fatalf("etcdtest: embedded etcd failed while starting: %v", err)
	case <-time.After(embeddedStartTimeout):
		t.Fatalf("etcdtest: embedded etcd not ready after %v", embeddedStartTimeout)
	}
	for _, l := range e.Clients {
		s.endpoints = append(s.endpoints, l.Addr().String())
	}
	return s
}

// Endpoints returns the server's client endpoints ("127.0.0.1:port").
func (s *EmbeddedServer) Endpoints() []string {
	return append([]string(nil), s.endpoints...)
}

// Stop closes the server and waits until its goroutines have ended; clients then
// see their connections refused. Stop may be called more than once.
//
// etcd waits up to its request timeout (seconds) for open client streams
// (watches, lease keep-alives) to end. A test that stops the server while a client still
// watches, to simulate etcd's loss, reaches it through a Proxy and calls Reset
// first: the streams then end at once and Stop takes milliseconds.
func (s *EmbeddedServer) Stop() {
	s.stopOnce.Do(s.etcd.Close)
}
