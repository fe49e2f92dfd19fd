package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/registry"
)

// childEnv makes the test binary run main() instead of the tests, so that
// TestSignalStopsCleanly can signal a real process; childArgsEnv, when set,
// gives its command line (arguments separated by spaces).
const (
	childEnv     = "IBIS_REGISTRY_CMD_TEST_CHILD"
	childArgsEnv = "IBIS_REGISTRY_CMD_TEST_ARGS"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(memberEnv); mode != "" {
		os.Exit(runMember(mode))
	}
	if os.Getenv(childEnv) != "" {
		os.Args = []string{"ibis-registry", "-host", "127.0.0.1", "-port", "0", "-v"}
		if args := os.Getenv(childArgsEnv); args != "" {
			os.Args = append([]string{"ibis-registry"}, strings.Fields(args)...)
		}
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m, leakcheck.Options()...) // nio's event loops keep a worker pool for the process
}

func TestSignalStopsCleanly(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			c, err := selfexec.Start(context.Background(), []string{selfexec.NoTests}, selfexec.WithStdoutPipe(),
				selfexec.WithEnv(childEnv+"=1"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			line, err := bufio.NewReader(c.StdoutPipe()).ReadString('\n')
			if err != nil || !strings.HasPrefix(line, "ibis-registry listening on 127.0.0.1:") {
				t.Fatalf("first line %q, %v; stderr:\n%s", line, err, c.Stderr())
			}
			if err := c.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if err := c.Wait(); err != nil {
				t.Fatalf("exit after %v: %v; stderr:\n%s", sig, err, c.Stderr())
			}
			if !strings.Contains(c.Stderr(), "shutting down") {
				t.Fatalf("no shutdown message; stderr:\n%s", c.Stderr())
			}
		})
	}
}

// syncBuffer collects the command's output while it runs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func noEnv(string) string { return "" }

// waitOutput polls the output until it contains want.
func waitOutput(t *testing.T, b *syncBuffer, want string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := b.String()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("output never contained %q:\n%s", want, s)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRunServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-host", "127.0.0.1", "-port", "0", "-events", "-stats", "5ms", "-v", "-recovery-window", "0",
			"-metrics", "127.0.0.1:0"}, noEnv, &stdout, &stderr)
	}()
	out := waitOutput(t, &stdout, "\n")
	const prefix = "ibis-registry listening on "
	if !strings.HasPrefix(out, prefix) {
		t.Fatalf("first line: %q", out)
	}
	addr := strings.TrimSpace(strings.SplitN(strings.TrimPrefix(out, prefix), "\n", 2)[0])

	jctx, jcancel := context.WithTimeout(ctx, 30*time.Second)
	defer jcancel()
	c, err := registry.Join(jctx, addr, "cmdpool", registry.WithAddress("x:1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, &stdout, "\nibis-registry pools: OPEN (not authenticated, not encrypted)")
	waitOutput(t, &stdout, "Joined cmdpool/0@x:1")
	waitOutput(t, &stdout, "Left cmdpool/0@x:1")
	waitOutput(t, &stdout, "stats pools=")
	waitOutput(t, &stderr, "member joined")
	// The metrics endpoint counts the join and the leave.
	metricsAt := waitOutput(t, &stdout, "/metrics\n")
	metricsAt = metricsAt[strings.Index(metricsAt, "http://"):]
	metricsAt = metricsAt[:strings.Index(metricsAt, "\n")]
	resp, err := http.Get(metricsAt)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"ibis_registry_joins_total 1\n", "ibis_registry_leaves_total 1\n", "ibis_registry_members 0\n"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run after cancel: %v", err)
	}
}

func TestFlagsAndEnvironment(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == portEnv {
				return v
			}
			return ""
		}
	}
	cfg, err := parseFlags(nil, env("9999"), io.Discard)
	if err != nil || cfg.port != 9999 || cfg.host != "0.0.0.0" || cfg.heartbeat != registry.DefaultHeartbeatInterval {
		t.Fatalf("defaults with %s=9999: %+v, %v", portEnv, cfg, err)
	}
	cfg, err = parseFlags([]string{"-port", "1234"}, env("9999"), io.Discard)
	if err != nil || cfg.port != 1234 {
		t.Fatalf("-port overrides the environment: %+v, %v", cfg, err)
	}
	cfg, err = parseFlags(nil, noEnv, io.Discard)
	if err != nil || cfg.port != 8888 {
		t.Fatalf("default port: %+v, %v", cfg, err)
	}
	if cfg.maxWaiting != registry.DefaultMaxWaitingRequests || cfg.maxMemberBytes != registry.DefaultMaxMemberNameBytes ||
		cfg.maxPoolNames != registry.DefaultMaxPoolNames || cfg.maxPoolBytes != registry.DefaultMaxPoolNameBytes ||
		cfg.maxUnjoined != registry.DefaultMaxUnjoinedConnections {
		t.Fatalf("default limits: %+v", cfg)
	}
	cfg, err = parseFlags([]string{"-max-pool-names", "7", "-max-unjoined", "3"}, noEnv, io.Discard)
	if err != nil || cfg.maxPoolNames != 7 || cfg.maxUnjoined != 3 {
		t.Fatalf("limit flags: %+v, %v", cfg, err)
	}
	if cfg.death != registry.DefaultDeathTimeout {
		t.Fatalf("default death timeout: %v", cfg.death)
	}
	if cfg.maxPoolsPerSource != registry.DefaultMaxPoolsPerSource || cfg.maxMembersPerSource != registry.DefaultMaxMembersPerSource {
		t.Fatalf("default limits per source: %+v", cfg)
	}
	cfg, err = parseFlags([]string{"-max-pools-per-source", "0", "-max-members-per-source", "9"}, noEnv, io.Discard)
	if err != nil || cfg.maxPoolsPerSource != 0 || cfg.maxMembersPerSource != 9 {
		t.Fatalf("limits per source: %+v, %v", cfg, err)
	}
	if _, err := parseFlags(nil, env("http"), io.Discard); err == nil || !strings.Contains(err.Error(), portEnv) {
		t.Fatalf("bad %s: %v", portEnv, err)
	}
	for _, args := range [][]string{
		{"-port", "70000"},
		{"-heartbeat", "0s"},
		{"-death-timeout", "0s"},
		{"-stats", "-1s"},
		{"-max-frame", "10"},
		{"-max-waiting", "0"},
		{"-max-member-bytes", "1000"},
		{"-max-pool-names", "0"},
		{"-max-pool-bytes", "1000"},
		{"-max-unjoined", "0"},
		{"-max-unjoined-per-source", "-1"},
		{"-recovery-grace", "0s"},
		{"-recovery-window", "-1s"},
		{"-max-pools-per-source", "-1"},
		{"-max-members-per-source", "-1"},
		{"extra"},
	} {
		if _, err := parseFlags(args, noEnv, io.Discard); err == nil {
			t.Fatalf("%v accepted", args)
		}
	}
	if _, err := parseFlags([]string{"-nosuchflag"}, noEnv, io.Discard); !errors.Is(err, errUsage) {
		t.Fatalf("unknown flag: %v", err)
	}
	if _, err := parseFlags([]string{"-h"}, noEnv, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
}

func TestRunFailsWhenPortTaken(t *testing.T) {
	srv, err := registry.StartEmbedded("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	port := srv.Addr()[strings.LastIndex(srv.Addr(), ":")+1:]
	err = run(context.Background(), []string{"-host", "127.0.0.1", "-port", port}, noEnv, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("run on a taken port: %v", err)
	}
}
