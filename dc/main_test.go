package dc_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/internal/leakcheck"
)

func TestMain(m *testing.M) {
	if s := os.Getenv(envScenario); s != "" {
		// A process of a pool that a cross-process test started (xproc_test.go).
		os.Exit(child(s))
	}
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}
