package ipl

// LaunchRanker is implemented by an Ibis whose implementation knows this process's rank
// among the processes launched together from the launch itself (mp: its rank in
// MPI_COMM_WORLD), so that layers above ipl never read an implementation's addresses.
type LaunchRanker interface {
	// LaunchRank returns the rank, or -1 when the implementation knows none.
	LaunchRank() int
}

// LaunchRankOf returns the launch rank of the process that runs ib: what ib says when it
// is a LaunchRanker that knows one, else LaunchRank (the launcher's environment); -1
// when neither says.
func LaunchRankOf(ib Ibis) int {
	if lr, ok := ib.(LaunchRanker); ok {
		if r := lr.LaunchRank(); r >= 0 {
			return r
		}
	}
	return LaunchRank()
}
