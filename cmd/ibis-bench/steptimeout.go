package main

import (
	"context"
	"fmt"
	"time"
)

// Bounds on the steps of the experiments whose peers could stop answering without
// leaving the pool (a failed sender or echo): a step that overruns fails instead of
// waiting for ever.
const (
	stepSlack   = time.Minute           // added to every step's own length
	perConnStep = 10 * time.Millisecond // per connection, for opening connections
)

// withDeadline runs step with a context that ends after d, and names the step and d
// in the error when that deadline is what ended it.
func withDeadline(ctx context.Context, what string, d time.Duration, step func(ctx context.Context) error) error {
	sctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err := step(sctx)
	if err != nil && ctx.Err() == nil && sctx.Err() != nil {
		return fmt.Errorf("%s did not finish within %v: %w", what, d, err)
	}
	return err
}
