package launch

import (
	"context"
	"errors"
	"fmt"
)

// Run starts spec.N processes, waits for all of them and returns their statuses, like
// Start followed by Wait. When ctx ends first, the group is stopped (SIGTERM, then SIGKILL
// after the grace period) and the error matches ErrStopped and carries ctx's cause.
func Run(ctx context.Context, spec Spec, opts ...Option) ([]Status, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w before start: %w", ErrStopped, context.Cause(ctx))
	}
	g, err := Start(spec, opts...)
	if err != nil {
		return nil, err
	}
	type outcome struct {
		statuses []Status
		err      error
	}
	done := make(chan outcome, 1)
	go func() {
		s, err := g.Wait()
		done <- outcome{s, err}
	}()
	select {
	case o := <-done:
		return o.statuses, o.err
	case <-ctx.Done():
		g.Stop()
		o := <-done
		if errors.Is(o.err, ErrStopped) {
			o.err = fmt.Errorf("%w: %w", ErrStopped, context.Cause(ctx))
		}
		return o.statuses, o.err
	}
}
