package registry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
)

// leaveMoveAfter is how long a member of several front ends waits for its own to
// confirm a leave before it also tries the others, and how long it gives each of them
// but the last. A front end that is stopped (SIGSTOP, a hung host) holds the leave
// unanswered; when it runs again the member's connection is gone, and the others would
// hear Died for a member that left. A front end that runs confirms within a store round
// trip.
const leaveMoveAfter = time.Second

// errUnconfirmed marks a leave that no front end confirmed, for Close to log.
var errUnconfirmed = errors.New("no registry front end confirmed the leave")

// leave asks the registry to record this member's leave. With several front ends (a
// shared store), while its own front end has not confirmed within leaveMoveAfter, or
// once the session with it broke, the member also moves to the others in turn (the
// takeover of a rejoin, client_rejoin.go) and leaves there, so that the pool hears
// Left. Whichever confirms first ends it; the supervisor stands down meanwhile
// (supervise), so that its rejoin does not take the member from the move. A member
// whose registry is lost already leaves nothing (see Leave).
func (c *Client) leave(ctx context.Context) error {
	s, err := c.current()
	if err != nil {
		return err
	}
	if len(c.eps) == 1 {
		_, err := c.callOn(ctx, s, &message{Kind: kindLeave})
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // ends the calls still under way once one front end confirmed
	first := make(chan error, 1)
	wg.Go(func() {
		_, err := c.callOn(ctx, s, &message{Kind: kindLeave})
		first <- err
	})
	t := time.NewTimer(leaveMoveAfter)
	defer t.Stop()
	var firstErr error
	select {
	case firstErr = <-first:
		if firstErr == nil || !errors.Is(firstErr, ErrRegistryLost) {
			return firstErr
		}
		first = nil // the session broke: the others may still take the leave
	case <-t.C:
	}
	from := int(c.cur.Load())
	c.log.Info("the registry front end did not confirm the leave; leaving through another too",
		zap.String("addr", c.eps[from].addr), zap.NamedError("session", firstErr))
	moved := make(chan bool, 1)
	wg.Go(func() { moved <- c.leaveElsewhere(ctx, from) })
	for first != nil || moved != nil {
		select {
		case err := <-first:
			if err == nil {
				return nil
			}
			// A refusal here may be the move's doing (the member is no longer this
			// session's): the move decides.
			firstErr, first = err, nil
		case ok := <-moved:
			if ok {
				return nil
			}
			moved = nil
		}
	}
	return fmt.Errorf("%w: front end %s: %w, and no other took it", errUnconfirmed, c.eps[from].addr, firstErr)
}

// leaveElsewhere tries the front ends after from in turn: it moves this member there
// and leaves. Each but the last gets leaveMoveAfter, so that a hung one does not
// keep the member from the rest. It reports whether one confirmed the leave.
func (c *Client) leaveElsewhere(ctx context.Context, from int) bool {
	n := len(c.eps)
	for k := 1; k < n && ctx.Err() == nil; k++ {
		i := (from + k) % n
		actx, cancel := ctx, context.CancelFunc(func() {})
		if k < n-1 {
			actx, cancel = context.WithTimeout(ctx, leaveMoveAfter)
		}
		s, err := c.rejoinWithin(actx, actx, i)
		if err == nil {
			_, err = c.callOn(actx, s, &message{Kind: kindLeave})
			s.end(ErrClosed)
		}
		cancel()
		if err == nil {
			c.log.Info("left through another front end", zap.String("addr", c.eps[i].addr))
			return true
		}
		c.log.Debug("leaving through another front end failed", zap.String("addr", c.eps[i].addr), zap.Error(err))
	}
	return false
}
