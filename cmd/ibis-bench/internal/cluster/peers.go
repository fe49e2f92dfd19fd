package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/ibisgo/ibis/internal/launch"
	"github.com/ibisgo/ibis/ipl"
)

// peerExitGrace is how long Close waits for started peers to exit on their own after
// the coordinator left before it kills them.
const peerExitGrace = 10 * time.Second

// startPeers starts n peer processes running s.Args in this pool, with ibis-run's
// launcher: their standard error goes to s.Stderr with the launch index in front of
// every line, and when one fails the others are stopped.
func (g *Group) startPeers(s Settings, n int) error {
	if n == 0 {
		return nil // a pool of one: the coordinator alone
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this program to start peers: %w", err)
	}
	args, err := json.Marshal(s.Args)
	if err != nil {
		return fmt.Errorf("encoding the peers' arguments: %w", err)
	}
	env := append(os.Environ(),
		EnvPeerArgs+"="+string(args),
		ipl.EnvRegistry+"="+g.registryAddr, ipl.EnvPool+"="+g.pool,
		ipl.EnvPoolSize+"="+strconv.Itoa(n+1), ipl.EnvImpl+"="+s.Impl)
	g.peerExits = make(chan launch.Status, n) // never blocks the launcher
	opts := []launch.Option{
		launch.WithEnv(func(int) []string { return env }),
		launch.WithLogger(g.log.Named("peers")),
		launch.WithOnExit(func(st launch.Status) { g.peerExits <- st }),
	}
	if s.Stderr != nil {
		opts = append(opts, launch.WithStderr(s.Stderr))
	}
	peers, err := launch.Start(launch.Spec{Program: self, N: n}, opts...)
	if err != nil {
		return fmt.Errorf("starting %d peers: %w", n, err)
	}
	g.peers = peers
	return nil
}

// waitClosed waits for the pool to fill, giving up early when a started peer exits.
func (g *Group) waitClosed(ctx context.Context) error {
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if g.peers != nil {
		go func() {
			select {
			case st := <-g.peerExits:
				cancel(fmt.Errorf("%w before the pool was complete: %v", ErrPeerFailed, &launch.ChildError{Status: st}))
			case <-wctx.Done():
			}
		}()
	}
	err := g.Ibis.Registry().WaitUntilPoolClosed(wctx)
	if err != nil && context.Cause(wctx) != nil && !errors.Is(context.Cause(wctx), context.Canceled) {
		return context.Cause(wctx)
	}
	return err
}

// waitPeers waits for the started peers to exit, killing them when they are still
// running peerExitGrace after the coordinator left, and returns the first failure.
func (g *Group) waitPeers() error {
	if g.peers == nil {
		return nil
	}
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err = g.peers.Wait()
	}()
	timer := time.NewTimer(peerExitGrace)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		g.peers.Kill()
		<-done
		if errors.Is(err, launch.ErrStopped) {
			return fmt.Errorf("%w: did not exit %v after the run and were killed", ErrPeerFailed, peerExitGrace)
		}
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPeerFailed, err)
	}
	return nil
}
