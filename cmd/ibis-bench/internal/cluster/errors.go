package cluster

import "errors"

var (
	// ErrPoolSize: an existing pool is open-world or too small for the experiment.
	ErrPoolSize = errors.New("cluster: unsuitable pool size")
	// ErrMemberGone: a member of the experiment left or died before the end.
	ErrMemberGone = errors.New("cluster: a member left or died")
	// ErrCoordinatorLeft: the coordinator left the pool cleanly; for a peer this
	// means the run is over.
	ErrCoordinatorLeft = errors.New("cluster: the coordinator left")
	// ErrPeerFailed: a peer process the suite started exited with an error.
	ErrPeerFailed = errors.New("cluster: peer process failed")
)
