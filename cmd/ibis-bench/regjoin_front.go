package main

// A registry front end of the registry-join experiment: registry.Server as
// ibis-registry runs it, in a process of its own, so that its memory and CPU are its
// own.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/registry"
)

// frontReadyTimeout bounds the wait for a front end to have read the pools from its
// store and serve.
const frontReadyTimeout = time.Minute

// frontOptions are the server options of a front end for a pool of n members: those of
// ibis-registry (-store etcd://...), with the limits that would refuse n members from
// one address raised (-max-unjoined 2n -max-unjoined-per-source 2n
// -max-members-per-source 0) and no recovery window (-recovery-window 0), so that a
// fresh server admits the pool at once.
func frontOptions(r regjoinRole, log *zap.Logger) []registry.ServerOption {
	unjoined := max(2*r.Members, registry.DefaultMaxUnjoinedConnections)
	return []registry.ServerOption{
		registry.WithEtcdStore(r.Etcd),
		registry.WithRestartable(true),
		registry.WithRecoveryWindow(0),
		registry.WithMaxUnjoinedConnections(unjoined),
		registry.WithMaxUnjoinedPerSource(unjoined),
		registry.WithMaxMembersPerSource(0),
		registry.WithServerLogger(log),
	}
}

// runFront serves until in closes or ctx ends. It says "listening ADDR" on out once
// the server is ready.
func runFront(ctx context.Context, r regjoinRole, in io.Reader, out io.Writer, log *zap.Logger) (err error) {
	if _, err := raiseFileLimit(uint64(2*r.Members + 256)); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("front end: %w", err)
	}
	srv := registry.NewServer(frontOptions(r, log)...)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		cerr := srv.Close()
		if serr := <-served; serr != nil && !errors.Is(serr, registry.ErrClosed) && cerr == nil {
			cerr = serr
		}
		if err == nil && cerr != nil {
			err = fmt.Errorf("front end: closing: %w", cerr)
		}
	}()
	if err := waitReady(ctx, srv); err != nil {
		return err
	}
	stopProfile, err := startCPUProfile(r.Profile)
	if err != nil {
		return err
	}
	defer func() { _ = stopProfile() }()
	if _, err := fmt.Fprintf(out, "listening %s\n", ln.Addr()); err != nil {
		return fmt.Errorf("front end: %w", err)
	}
	orders := watchStdin(in)
	for {
		select {
		case _, ok := <-orders:
			if !ok {
				return nil
			}
		case err := <-served:
			served <- err // for the deferred close
			return fmt.Errorf("front end: serving: %w", err)
		case <-ctx.Done():
			return fmt.Errorf("front end: %w", ctx.Err())
		}
	}
}

// waitReady waits until the server serves (an etcd store has read its pools).
func waitReady(ctx context.Context, srv *registry.Server) error {
	ctx, cancel := context.WithTimeout(ctx, frontReadyTimeout)
	defer cancel()
	for {
		err := srv.Ready()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("front end not ready: %w (%w)", err, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
