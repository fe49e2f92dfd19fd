package core

import "github.com/ibisgo/ibis/ipl"

var _ ipl.LaunchRanker = (*Instance)(nil)

// LaunchRanker is implemented by a Transport that knows this process's launch rank
// (mp: the MPI rank).
type LaunchRanker interface {
	// LaunchRank returns the rank, or -1 when it knows none.
	LaunchRank() int
}

// LaunchRank is the transport's launch rank when it knows one, else -1 (ipl.LaunchRankOf
// then falls back to the launcher's environment).
func (in *Instance) LaunchRank() int {
	if lr, ok := in.tr.(LaunchRanker); ok {
		return lr.LaunchRank()
	}
	return -1
}
