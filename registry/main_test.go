package registry_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/internal/tlsconf"
	"github.com/ibisgo/ibis/registry"
)

// Environment of the child mode of the test binary (see
// TestCrossProcessKilledMemberDies).
const (
	childAddrEnv = "IBIS_REGISTRY_TEST_CHILD_ADDR"
	childPoolEnv = "IBIS_REGISTRY_TEST_CHILD_POOL"
	// serverAddrEnv makes the test binary a registry server listening on
	// the address it names (see TestCrossProcessRegistryRestart);
	// serverGraceEnv sets its recovery grace period.
	serverAddrEnv  = "IBIS_REGISTRY_TEST_SERVER_ADDR"
	serverGraceEnv = "IBIS_REGISTRY_TEST_SERVER_GRACE"
	// serverSecretEnv names a file holding the server's pool secret, and
	// serverTLSDirEnv a directory holding cert.pem, key.pem and ca.pem for
	// TLS (see TestCrossProcessSecretAndTLS).
	serverSecretEnv = "IBIS_REGISTRY_TEST_SERVER_SECRET_FILE"
	serverTLSDirEnv = "IBIS_REGISTRY_TEST_SERVER_TLS_DIR"
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(childAddrEnv); addr != "" {
		os.Exit(runChild(addr, os.Getenv(childPoolEnv)))
	}
	if addr := os.Getenv(serverAddrEnv); addr != "" {
		os.Exit(runServer(addr, os.Getenv(serverGraceEnv)))
	}
	goleak.VerifyTestMain(m)
}

// runServer is the body of a server child process: a stand-alone
// (restartable) registry on addr that says where it listens and serves
// until it is killed, or, should the parent vanish, for a few minutes.
func runServer(addr, grace string) int {
	var opts []registry.ServerOption
	if grace != "" {
		d, err := time.ParseDuration(grace)
		if err != nil {
			fmt.Fprintln(os.Stderr, "server:", err)
			return 2
		}
		opts = append(opts, registry.WithRecoveryGrace(d))
	}
	if path := os.Getenv(serverSecretEnv); path != "" {
		secret, err := poolauth.Load("", path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "server:", err)
			return 2
		}
		opts = append(opts, registry.WithServerSecret(secret.Bytes()))
	}
	if dir := os.Getenv(serverTLSDirEnv); dir != "" {
		files := tlsconf.Files{Cert: filepath.Join(dir, "cert.pem"), Key: filepath.Join(dir, "key.pem"), CA: filepath.Join(dir, "ca.pem")}
		cfg, err := files.Server()
		if err != nil {
			fmt.Fprintln(os.Stderr, "server:", err)
			return 2
		}
		opts = append(opts, registry.WithServerTLS(cfg))
	}
	logger, err := zap.NewDevelopment()
	if err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		return 2
	}
	opts = append(opts, registry.WithServerLogger(logger))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		return 2
	}
	s := registry.NewServer(opts...)
	fmt.Println("serving", ln.Addr())
	go func() {
		time.Sleep(5 * time.Minute)
		_ = s.Close()
	}()
	if err := s.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		return 1
	}
	return 0
}

// runChild is the body of the child process: join the pool, say so, and
// stay until killed (or, should the parent vanish, until a deadline).
func runChild(addr, pool string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := registry.Join(ctx, addr, pool, registry.WithTag("child"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	fmt.Println("joined", c.Identity())
	select {
	case <-c.Done():
	case <-time.After(time.Minute):
	}
	_ = c.Close()
	return 0
}

// testTimeout bounds every wait in the tests; it is generous because the
// tests must pass on a loaded machine, and no test asserts a duration.
const testTimeout = 30 * time.Second

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func testLogger(t *testing.T) *zap.Logger {
	return zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel))
}

func startServer(t *testing.T, opts ...registry.ServerOption) *registry.Server {
	t.Helper()
	opts = append([]registry.ServerOption{registry.WithServerLogger(testLogger(t))}, opts...)
	s, err := registry.StartEmbedded("127.0.0.1:0", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close server: %v", err)
		}
	})
	return s
}

func join(t *testing.T, s *registry.Server, pool string, opts ...registry.Option) *registry.Client {
	t.Helper()
	opts = append([]registry.Option{registry.WithLogger(testLogger(t))}, opts...)
	c, err := registry.Join(testContext(t), s.Addr(), pool, opts...)
	if err != nil {
		t.Fatalf("join %q: %v", pool, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close client %s: %v", c.Identity(), err)
		}
	})
	return c
}

// nextEvent returns the next event of c, failing the test if none comes.
func nextEvent(t *testing.T, c *registry.Client) registry.Event {
	t.Helper()
	select {
	case ev, ok := <-c.Events():
		if !ok {
			t.Fatalf("%s: event channel closed (client error: %v)", c.Identity(), c.Err())
		}
		return ev
	case <-time.After(testTimeout):
		t.Fatalf("%s: no event within %v", c.Identity(), testTimeout)
	}
	panic("unreachable")
}

// waitEvent skips events of c until one satisfies match and returns it.
func waitEvent(t *testing.T, c *registry.Client, what string, match func(registry.Event) bool) registry.Event {
	t.Helper()
	deadline := time.After(testTimeout)
	for {
		select {
		case ev, ok := <-c.Events():
			if !ok {
				t.Fatalf("%s: event channel closed while waiting for %s (client error: %v)", c.Identity(), what, c.Err())
			}
			if match(ev) {
				return ev
			}
		case <-deadline:
			t.Fatalf("%s: no %s event within %v", c.Identity(), what, testTimeout)
		}
	}
}

func isEvent(typ registry.EventType, who registry.Identifier) func(registry.Event) bool {
	return func(ev registry.Event) bool { return ev.Type == typ && ev.Member.ID == who.ID }
}

// eventually polls cond until it holds; for server state that has no event
// to wait on (such as a request parked at the server).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition never held: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func mustErrorIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got error %v, want one wrapping %v", err, target)
	}
}
