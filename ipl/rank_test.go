package ipl

import "testing"

// rankedIbis is an Ibis whose implementation knows its launch rank (or -1).
type rankedIbis struct {
	Ibis
	rank int
}

func (r rankedIbis) LaunchRank() int { return r.rank }

func TestLaunchRankOf(t *testing.T) {
	t.Setenv(EnvRank, "5")
	if got := LaunchRankOf(rankedIbis{rank: 2}); got != 2 {
		t.Errorf("an Ibis that knows its rank: LaunchRankOf = %d, want 2", got)
	}
	if got := LaunchRankOf(rankedIbis{rank: -1}); got != 5 {
		t.Errorf("an Ibis that knows none: LaunchRankOf = %d, want IBIS_RANK's 5", got)
	}
	var plain struct{ Ibis }
	if got := LaunchRankOf(plain); got != 5 {
		t.Errorf("an Ibis that is no LaunchRanker: LaunchRankOf = %d, want IBIS_RANK's 5", got)
	}
}
