package mpj

import (
	"context"
	"fmt"
)

// Barrier returns when every rank of c has called it (MPI_Barrier). Up to 8 ranks it
// gathers to rank 0 and releases from there (small.go: the fewest messages); beyond,
// it is the dissemination barrier: in round k each rank signals rank+2^k and waits for
// rank-2^k, so it takes ceil(log2 p) rounds for any number of processes p.
func (c *Comm) Barrier(ctx context.Context) error {
	c.begin()
	var err error
	if c.flatBarrier() {
		err = c.barrierFlat(ctx)
	} else {
		err = c.barrierDissemination(ctx)
	}
	if err != nil {
		return fmt.Errorf("mpj: Barrier: %w", err)
	}
	return nil
}

func (c *Comm) barrierDissemination(ctx context.Context) error {
	n := c.Size()
	for k := 1; k < n; k <<= 1 {
		if err := c.csendrecv(ctx, nil, (c.rank+k)%n, nil, (c.rank-k+n)%n, tagBarrier); err != nil {
			return err
		}
	}
	return nil
}
