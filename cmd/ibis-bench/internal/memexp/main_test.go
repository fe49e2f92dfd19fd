package memexp

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fast are the options of tests that only need every case to run and be
// checked, not a meaningful timing: three batches of one operation.
var fast = []Option{WithRepetitions(3), WithMinBatch(0)}
