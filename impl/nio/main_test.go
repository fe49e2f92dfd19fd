package nio

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/internal/leakcheck"
)

func TestMain(m *testing.M) {
	if os.Getenv(envKilledChild) != "" {
		// A child process of the killed-peer tests (killed_test.go).
		os.Exit(runKilledChild())
	}
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}
