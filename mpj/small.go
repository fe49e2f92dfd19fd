package mpj

import "context"

// Small messages between few processes. Each level of a tree costs a whole message
// latency (a write, the wake-up of the receiving process, the hand-offs inside it), and
// every message costs both ends CPU, mostly in the kernel; with few processes, and
// more so with more processes than cores, that dwarfs the time a root takes to write a
// tiny message. There one level wins: the root writes to every rank itself (Bcast,
// Scatter), and Barrier gathers to a root and releases from it, 2(p-1) messages where
// dissemination sends p·log2 p. The choice depends only on what every rank passes (p,
// and the element count, which must agree on every rank), so all ranks choose alike.
// docs/collectives.md, "Small messages", has the figures.

// The flat algorithms run on at most flatMaxProcs ranks, and Bcast and Scatter take
// them for at most flatMaxBytes per message (per block for Scatter).
const (
	flatMaxBytes = 1024
	flatMaxProcs = 8
)

// flatLimits holds the limits in force. Tests change it, between collectives, to run
// the trees on small pools too.
var flatLimits = struct{ bytes, procs int }{bytes: flatMaxBytes, procs: flatMaxProcs}

// flat reports whether a Bcast or Scatter of n elements of dt per message on c takes
// the flat algorithm.
func (c *Comm) flat(dt Datatype, n int) bool {
	return c.flatBarrier() && n*dt.size() <= flatLimits.bytes
}

// flatBarrier reports whether Barrier on c gathers to a root and releases from it.
func (c *Comm) flatBarrier() bool { return c.Size() <= flatLimits.procs }

// bcastFlat is Bcast in one level: the root sends buf to every other rank in turn.
func (c *Comm) bcastFlat(ctx context.Context, buf any, root int) error {
	if c.rank != root {
		return c.crecv(ctx, buf, root, tagBcast)
	}
	p := c.Size()
	for i := 1; i < p; i++ {
		if err := c.csend(ctx, buf, (root+i)%p, tagBcast); err != nil {
			return err
		}
	}
	return nil
}

// scatterFlat is Scatter in one level: the root sends every rank its block of cnt
// elements straight from sendbuf.
func (c *Comm) scatterFlat(ctx context.Context, sendbuf, recvbuf any, cnt, root int) error {
	if c.rank != root {
		return c.crecv(ctx, recvbuf, root, tagScatter)
	}
	p := c.Size()
	for i := 1; i < p; i++ {
		r := (root + i) % p
		if err := c.csend(ctx, sliceBuf(sendbuf, r*cnt, (r+1)*cnt), r, tagScatter); err != nil {
			return err
		}
	}
	copyBuf(recvbuf, sliceBuf(sendbuf, root*cnt, (root+1)*cnt))
	return nil
}

// barrierFlat is Barrier in two levels: every rank tells rank 0 it has arrived and
// waits to be released; rank 0, once all have arrived, releases each. A rank's next
// arrival comes only after its release, so arrivals of successive barriers never mix.
// Rank 0 takes the arrivals rank by rank, not from AnySource: a receive from a rank
// that has gone fails at once, where one from AnySource waits for another sender.
func (c *Comm) barrierFlat(ctx context.Context) error {
	p := c.Size()
	if c.rank != 0 {
		if err := c.csend(ctx, nil, 0, tagBarrier); err != nil {
			return err
		}
		return c.crecv(ctx, nil, 0, tagBarrier)
	}
	for r := 1; r < p; r++ {
		if err := c.crecv(ctx, nil, r, tagBarrier); err != nil {
			return err
		}
	}
	for r := 1; r < p; r++ {
		if err := c.csend(ctx, nil, r, tagBarrier); err != nil {
			return err
		}
	}
	return nil
}
