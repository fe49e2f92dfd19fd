package mpj_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/internal/leakcheck"
)

func TestMain(m *testing.M) {
	if os.Getenv(envChild) != "" {
		if op := os.Getenv(envScenario); op != "" {
			// A process of a pool that TestPeerGone started (failure_test.go).
			os.Exit(runScenario(op))
		}
		// A process of a pool that TestPool started (pool_test.go).
		os.Exit(runChild())
	}
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}
