package mpj_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ibisgo/ibis/ipl"
)

// Gatherv with too few counts and no displacements (nil: packed in rank order) blames
// the counts, not the displacements it was never given.
func TestGathervBlamesTheCounts(t *testing.T) {
	ctx, w := worldOfOne(t)
	err := w.Gatherv(ctx, []float64{1}, make([]float64, 1), []int{}, nil, 0)
	if !errors.Is(err, ipl.ErrInvalidArgument) || !strings.Contains(err.Error(), "0 counts") || strings.Contains(err.Error(), "displacements") {
		t.Errorf("Gatherv with no counts: %v, want ErrInvalidArgument about the counts", err)
	}
}
