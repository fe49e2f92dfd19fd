package mpj_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	_ "github.com/ibisgo/ibis/impl/nio"
	_ "github.com/ibisgo/ibis/impl/tcp"
	"github.com/ibisgo/ibis/internal/leakcheck"
	"github.com/ibisgo/ibis/internal/selfexec"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/mpj"
	"github.com/ibisgo/ibis/registry"
)

// envChild makes the test binary play one process of a pool.
const envChild = "MPJ_TEST_CHILD"

// poolTimeout bounds one pool's run; it only ends a hung run.
const poolTimeout = 90 * time.Second

// TestPool runs the whole suite (suite_test.go) in real pools of P = 1..5 processes on
// tcp and nio: the test binary re-executes itself as each process, with an embedded
// registry on 127.0.0.1. Launch ranks are given in the reverse of the start order, so
// that ranks that merely followed the join order would be caught.
func TestPool(t *testing.T) {
	for _, impl := range []string{"tcp", "nio"} {
		t.Run(impl, func(t *testing.T) {
			t.Parallel()
			for p := 1; p <= 5; p++ {
				t.Run(fmt.Sprintf("P=%d", p), func(t *testing.T) { runPool(t, impl, p) })
			}
		})
	}
}

func runPool(t *testing.T, impl string, p int) {
	srv, err := registry.StartEmbedded("127.0.0.1:0", registry.WithHeartbeatInterval(10*time.Second))
	if err != nil {
		t.Fatalf("starting the registry: %v", err)
	}
	defer srv.Close()
	pool := fmt.Sprintf("mpj-%s-%d-%d", impl, p, time.Now().UnixNano())
	children := make([]*selfexec.Child, p)
	errs := make([]error, p)
	var wg sync.WaitGroup
	for i := range p {
		c, err := selfexec.Start(context.Background(), []string{selfexec.NoTests}, selfexec.WithEnv(envChild+"=1",
			ipl.EnvRegistry+"="+srv.Addr(), ipl.EnvPool+"="+pool, ipl.EnvPoolSize+"="+strconv.Itoa(p),
			ipl.EnvImpl+"="+impl, "IBIS_RANK="+strconv.Itoa(p-1-i)))
		if err != nil {
			t.Fatalf("starting process %d: %v", i, err)
		}
		children[i] = c
		wg.Go(func() {
			select {
			case <-c.Done():
				errs[i] = c.Wait()
			case <-time.After(poolTimeout + 10*time.Second):
				errs[i] = fmt.Errorf("did not end: %w", c.Kill())
			}
		})
	}
	wg.Wait()
	for i := range p {
		if errs[i] != nil {
			t.Errorf("process %d (rank %d): %v\n%s", i, p-1-i, errs[i], children[i].Output())
		}
	}
}

// runChild is one process of a pool: it makes the world and runs the suite.
func runChild() int {
	ctx, cancel := context.WithTimeout(context.Background(), poolTimeout)
	defer cancel()
	w, err := mpj.New(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mpj.New:", err)
		return 1
	}
	if err := runSuite(ctx, w); err != nil {
		fmt.Fprintf(os.Stderr, "rank %d of %d on %s: %v\n", w.Rank(), w.Size(), w.Implementation(), err)
		_ = w.Close()
		return 1
	}
	if err := w.Finalize(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "rank %d: Finalize: %v\n", w.Rank(), err)
		return 1
	}
	if err := goleak.Find(leakcheck.Options()...); err != nil {
		fmt.Fprintf(os.Stderr, "rank %d: goroutines outlive Finalize: %v\n", w.Rank(), err)
		return 1
	}
	if os.Getenv(envMPI) != "" { // TestMPIRun counts these
		fmt.Printf("mpj suite passed: rank %d of %d on %s\n", w.Rank(), w.Size(), w.Implementation())
	}
	return 0
}
