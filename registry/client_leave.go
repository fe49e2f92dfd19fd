package registry

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// leaveMoveAfter is how long a member of several front ends waits for its own to
// confirm a leave before it also tries the others. A front end that is stopped (SIGSTOP,
// a hung host) holds the leave unanswered; when it runs again the member's connection is
// gone, and the others would hear Died for a member that left. A front end that runs
// confirms within a store round trip.
const leaveMoveAfter = time.Second

// leave asks the registry to record this member's leave. With several front ends (a
// shared store), while its own front end has not confirmed within leaveMoveAfter the
// member also moves to the others in turn (the takeover of a rejoin, client_rejoin.go)
// and leaves there, so that the pool hears Left. Whichever confirms first ends it; a
// move that finds the member gone (its own front end recorded the leave meanwhile)
// fails and is no harm. The error is the first front end's when none confirmed.
func (c *Client) leave(ctx context.Context) error {
	if len(c.eps) == 1 {
		_, err := c.call(ctx, &message{Kind: kindLeave})
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the call below if another front end confirmed
	first := make(chan error, 1)
	go func() {
		_, err := c.call(ctx, &message{Kind: kindLeave})
		first <- err
	}()
	t := time.NewTimer(leaveMoveAfter)
	defer t.Stop()
	select {
	case err := <-first:
		return err
	case <-t.C:
	}
	from := int(c.cur.Load())
	c.log.Info("the registry front end did not confirm the leave; leaving through another too",
		zap.String("addr", c.eps[from].addr), zap.Duration("waited", leaveMoveAfter))
	for k := 1; k < len(c.eps) && ctx.Err() == nil; k++ {
		i := (from + k) % len(c.eps)
		if c.leaveAt(ctx, i) {
			return nil
		}
		select {
		case err := <-first:
			return err
		default:
		}
	}
	err := <-first // ends with ctx at the latest
	if err != nil {
		err = fmt.Errorf("front end %s did not confirm, and no other took the leave: %w", c.eps[from].addr, err)
	}
	return err
}

// leaveAt moves this member to front end i and leaves there; it reports whether that
// front end confirmed the leave.
func (c *Client) leaveAt(ctx context.Context, i int) bool {
	s, err := c.rejoinWithin(ctx, ctx, i)
	if err == nil {
		_, err = c.callOn(ctx, s, &message{Kind: kindLeave})
		s.end(ErrClosed)
	}
	if err != nil {
		c.log.Debug("leaving through another front end failed", zap.String("addr", c.eps[i].addr), zap.Error(err))
		return false
	}
	c.log.Info("left through another front end", zap.String("addr", c.eps[i].addr))
	return true
}
