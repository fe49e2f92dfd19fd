package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/registry"
)

// envChild marks a process started by the tests: the test binary then runs ibis-load
// with its arguments instead of the tests, as one process of a pool.
const envChild = "IBIS_LOAD_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(envChild) != "" {
		os.Exit(mainCode(context.Background(), flag.CommandLine, os.Args[1:], os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}

// poolTimeout bounds one pool run; it only ends a hung run.
const poolTimeout = 2 * time.Minute

// procOut is what one process of a test pool did.
type procOut struct {
	code           int
	stdout, stderr string
}

// runPool runs np processes of ibis-load with args in one pool at an embedded registry,
// as ibis-run does (with impl as IBIS_IMPL), and returns what each did. When one fails,
// the others are killed.
func runPool(t *testing.T, np int, impl string, args ...string) []procOut {
	t.Helper()
	srv, err := registry.StartEmbedded("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), poolTimeout)
	defer cancel()
	base := []string{envChild + "=1", "IBIS_REGISTRY=" + srv.Addr(),
		"IBIS_POOL=" + strings.ReplaceAll(t.Name(), "/", "-"), "IBIS_POOL_SIZE=" + strconv.Itoa(np), "IBIS_IMPL=" + impl}
	outs := make([]procOut, np)
	var wg sync.WaitGroup
	for i := range np {
		c, err := selfexec.Start(ctx, args, selfexec.WithoutEnv("IBIS_"),
			selfexec.WithEnv(append(slices.Clone(base), "IBIS_RANK="+strconv.Itoa(i))...))
		if err != nil {
			cancel()
			wg.Wait()
			t.Fatal(err)
		}
		wg.Go(func() {
			err := c.Wait()
			outs[i] = procOut{code: c.ExitCode(), stdout: c.Stdout(), stderr: c.Stderr()}
			if err != nil {
				cancel() // a failed process: end the others
			}
		})
	}
	wg.Wait()
	return outs
}

// describe prints what the processes did, for a failure message.
func describe(outs []procOut) string {
	var b strings.Builder
	for i, o := range outs {
		fmt.Fprintf(&b, "process %d: exit %d\nstdout:\n%sstderr:\n%s", i, o.code, o.stdout, o.stderr)
	}
	return b.String()
}
