// Package serveloop is the main loop the server commands share (ibis-registry,
// ibis-hub): wait until the command is told to stop or the server fails, printing the
// server's statistics at an interval meanwhile.
package serveloop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.uber.org/zap"
)

// Server is a server whose Serve runs on a goroutine of the caller.
type Server interface {
	// Close stops the server; Serve then returns.
	Close() error
}

// Run waits until ctx ends (then it closes srv and returns Close's error, or Serve's
// when Serve failed otherwise than with closed, which reports the shutdown asked for) or
// until Serve, whose result served delivers, returns by itself (a failure). With every
// above zero it prints "TIME stats STATS" to out at that interval.
func Run(ctx context.Context, log *zap.Logger, srv Server, served <-chan error, closed error,
	out io.Writer, every time.Duration, stats func() string) error {
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			log.Info("shutting down", zap.NamedError("cause", context.Cause(ctx)))
			err := srv.Close()
			// Serve may not have started before Close: then it reports closed, which is
			// the shutdown asked for, not a failure.
			if serr := <-served; serr != nil && err == nil && !errors.Is(serr, closed) {
				err = serr
			}
			return err
		case err := <-served:
			_ = srv.Close()
			return fmt.Errorf("serve: %w", err)
		case <-tick:
			if _, err := fmt.Fprintf(out, "%s stats %s\n", time.Now().Format(time.RFC3339), stats()); err != nil {
				log.Warn("cannot print statistics", zap.Error(err))
			}
		}
	}
}
