package mpj_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/mpj"
)

// Gatherv with too few counts and no displacements (nil: packed in rank order) blames
// the counts, not the displacements it was never given.
func TestGathervBlamesTheCounts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := mpj.New(ctx, ipl.WithImplementation("tcp"), ipl.WithPool(t.Name()), ipl.WithPoolSize(1))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Close() }()
	err = w.Gatherv(ctx, []float64{1}, make([]float64, 1), []int{}, nil, 0)
	if !errors.Is(err, ipl.ErrInvalidArgument) || !strings.Contains(err.Error(), "0 counts") || strings.Contains(err.Error(), "displacements") {
		t.Errorf("Gatherv with no counts: %v, want ErrInvalidArgument about the counts", err)
	}
}
