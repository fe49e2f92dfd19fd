package hub

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/ibisgo/ibis/internal/leakcheck"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}
