package mpj_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/mpj"
)

// TestAllreduceInvalidOp: an Op that is no operator (Op(0), the numbers between the
// predefined ones and NewOp's, a user op never made) fails Allreduce with
// ipl.ErrInvalidArgument naming the value, not as a type mismatch; a real operator on a
// type it does not take stays ErrTypeMismatch.
func TestAllreduceInvalidOp(t *testing.T) {
	ctx, w := worldOfOne(t)
	b := []float64{1}
	for op, name := range map[mpj.Op]string{0: "Op(0)", mpj.MinLoc + 1: "Op(13)", 127: "Op(127)", 200: "user op 200"} {
		err := w.Allreduce(ctx, b, b, op)
		if !errors.Is(err, ipl.ErrInvalidArgument) || errors.Is(err, mpj.ErrTypeMismatch) ||
			!strings.Contains(err.Error(), name) {
			t.Errorf("Allreduce with %s: %v, want ipl.ErrInvalidArgument naming it", name, err)
		}
	}
	if err := w.Allreduce(ctx, []bool{true}, make([]bool, 1), mpj.Sum); !errors.Is(err, mpj.ErrTypeMismatch) {
		t.Errorf("Allreduce of Sum on []bool: %v, want ErrTypeMismatch", err)
	}
}
