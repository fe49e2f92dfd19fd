package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/internal/hub"
	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/internal/poolauth"
	"github.com/ibisgo/ibis/internal/poolsecrets"
	"github.com/ibisgo/ibis/internal/selfexec"
)

// childEnv makes the test binary run main() instead of the tests, so that
// TestSignalStopsCleanly can signal a real process.
const childEnv = "IBIS_HUB_CMD_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Args = []string{"ibis-hub", "-listen", "127.0.0.1:0"}
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}

const patience = 60 * time.Second

func TestSignalStopsCleanly(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			c, err := selfexec.Start(context.Background(), []string{selfexec.NoTests}, selfexec.WithStdoutPipe(),
				selfexec.WithEnv(childEnv+"=1"), selfexec.WithoutEnv("IBIS_POOL_SECRET"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			out := bufio.NewReader(c.StdoutPipe())
			line, err := out.ReadString('\n')
			if err != nil || !strings.HasPrefix(line, "ibis-hub listening on 127.0.0.1:") {
				t.Fatalf("first line %q, %v; stderr:\n%s", line, err, c.Stderr())
			}
			line, err = out.ReadString('\n')
			if err != nil || !strings.HasPrefix(line, "ibis-hub pools: OPEN") {
				t.Fatalf("second line %q, %v; stderr:\n%s", line, err, c.Stderr())
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

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

// TestRunRelays runs the hub with the secret from the environment and relays a
// connection through it; a wrong secret is refused.
func TestRunRelays(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	env := envOf(map[string]string{poolsecrets.EnvSecret: "s3cret"})
	go func() {
		done <- run(ctx, []string{"-listen", "127.0.0.1:0", "-log-level", "warn"}, env, &out, io.Discard)
	}()

	deadline := time.Now().Add(patience)
	for !strings.Contains(out.String(), "ibis-hub pools:") {
		if time.Now().After(deadline) {
			t.Fatalf("no headline: %q", out.String())
		}
		time.Sleep(time.Millisecond)
	}
	lines := strings.Split(out.String(), "\n")
	addr := strings.TrimPrefix(lines[0], "ibis-hub listening on ")
	if want := "ibis-hub pools: authenticated (a secret for every pool"; !strings.HasPrefix(lines[1], want) {
		t.Errorf("headline %q, want it to begin %q", lines[1], want)
	}

	rctx, rcancel := context.WithTimeout(ctx, patience)
	defer rcancel()
	secret := poolauth.New([]byte("s3cret"))
	m, err := hub.Register(rctx, addr, hub.Registration{Pool: "p", Secret: secret, Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	c, err := hub.Relay(rctx, addr, hub.RelayRequest{Pool: "p", Secret: secret, Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var d io.ReadCloser
	select {
	case d = <-m.Accepted():
	case <-time.After(patience):
		t.Fatal("no relayed connection arrived")
	}
	defer d.Close()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(d, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("relayed %q, %v", buf, err)
	}
	_, err = hub.Relay(rctx, addr, hub.RelayRequest{Pool: "p", Secret: poolauth.New([]byte("guess")), Key: "k"})
	if !errors.Is(err, hub.ErrRefused) {
		t.Errorf("wrong secret: %v, want ErrRefused", err)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	<-m.Done()
}

func TestFlags(t *testing.T) {
	dir := t.TempDir()
	public := filepath.Join(dir, "public")
	if err := os.WriteFile(public, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(public, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args    []string
		errText string
	}{
		{[]string{"-max-conns", "0"}, "-max-conns 0 must be positive"},
		{[]string{"-relay-timeout", "0s"}, "-relay-timeout 0s must be positive"},
		{[]string{"-log-level", "loud"}, "loud"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-listen", "127.0.0.1:0", "-secret-file", public}, "every user"},
		{[]string{"-listen", "127.0.0.1:0", "-pool-secrets", filepath.Join(dir, "none")}, "no such file"},
	} {
		err := run(context.Background(), c.args, envOf(nil), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.errText) {
			t.Errorf("%q: %v, want an error saying %q", c.args, err, c.errText)
		}
	}
}

// A bad value the flag package accepted is explained on stderr (it used to exit 2
// silently); one the flag package refused is not explained twice.
func TestReportExplainsBadValues(t *testing.T) {
	for _, c := range []struct {
		args       []string
		code       int
		wantStderr string
	}{
		{[]string{"-keepalive", "0s"}, 2, "ibis-hub: bad command line: -keepalive 0s must be positive\n"},
		{[]string{"-max-conns", "-1"}, 2, "ibis-hub: bad command line: -max-conns -1 must be positive\n"},
		{[]string{"extra"}, 2, "ibis-hub: bad command line: unexpected arguments [\"extra\"]\n"},
		{[]string{"-log-level", "loud"}, 2, ""},
		{[]string{"-h"}, 0, ""},
	} {
		var flagOut, stderr strings.Builder
		err := run(context.Background(), c.args, envOf(nil), io.Discard, &flagOut)
		if code := report(err, &stderr); code != c.code || stderr.String() != c.wantStderr {
			t.Errorf("%q: exit %d, stderr %q; want %d, %q", c.args, code, stderr.String(), c.code, c.wantStderr)
		}
		if c.wantStderr == "" && c.code == 2 && !strings.Contains(flagOut.String(), "loud") {
			t.Errorf("%q: the flag package said %q, want the bad value named", c.args, flagOut.String())
		}
	}
	var stderr strings.Builder
	if code := report(errors.New("listening: refused"), &stderr); code != 1 || stderr.String() != "ibis-hub: listening: refused\n" {
		t.Errorf("a failure: exit %d, stderr %q", code, stderr.String())
	}
}

func TestHeadline(t *testing.T) {
	if h := headline(poolsecrets.Secrets{}); !strings.HasPrefix(h, "ibis-hub pools: OPEN") {
		t.Errorf("open: %q", h)
	}
	s := poolsecrets.Secrets{Pools: map[string][]byte{"run42": []byte("x")}}
	if h := headline(s); !strings.Contains(h, "authenticated (secrets for 1 pools, which alone are served") {
		t.Errorf("per pool: %q", h)
	}
}
