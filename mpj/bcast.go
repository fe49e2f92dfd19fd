package mpj

import (
	"context"
	"fmt"
)

// Bcast sends root's buf to every rank's buf (MPI_Bcast); every rank's buf must have
// the root's length and type. It is a binomial tree: a rank receives once from its
// parent and forwards to its children, so it takes ceil(log2 p) steps and the root
// sends log2 p messages, not p-1; a message of up to 1 KiB among up to 8 ranks goes
// from the root to each rank directly instead (small.go).
func (c *Comm) Bcast(ctx context.Context, buf any, root int) error {
	c.begin()
	if err := c.bcast(ctx, buf, root); err != nil {
		return fmt.Errorf("mpj: Bcast: %w", err)
	}
	return nil
}

func (c *Comm) bcast(ctx context.Context, buf any, root int) error {
	if err := c.checkRoot(root); err != nil {
		return err
	}
	dt, cnt, err := bufInfo(buf)
	if err != nil {
		return err
	}
	if c.flat(dt, cnt) {
		return c.bcastFlat(ctx, buf, root)
	}
	n := c.Size()
	vr := (c.rank - root + n) % n
	mask := topMask(n) << 1
	if vr != 0 {
		mask = lowbit(vr)
		if err := c.crecv(ctx, buf, (vr-mask+root)%n, tagBcast); err != nil {
			return err
		}
	}
	for mask >>= 1; mask > 0; mask >>= 1 {
		if vr+mask < n {
			if err := c.csend(ctx, buf, (vr+mask+root)%n, tagBcast); err != nil {
				return err
			}
		}
	}
	return nil
}
