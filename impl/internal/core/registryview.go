package core

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// registryView is the ipl.Registry of an Instance: the registry client's services plus
// the instance's own event queue.
type registryView struct{ in *Instance }

func (r registryView) Members() []ipl.IbisIdentifier { return r.in.reg.Members() }
func (r registryView) PoolSize() int                 { return r.in.reg.PoolSize() }

func (r registryView) WaitUntilPoolClosed(ctx context.Context) error {
	ctx, cancel := r.in.bind(ctx)
	defer cancel()
	return r.in.endErr(registryError(ctx, r.in.reg.WaitUntilPoolClosed(ctx)))
}

func (r registryView) Elect(ctx context.Context, election string) (ipl.IbisIdentifier, error) {
	ctx, cancel := r.in.bind(ctx)
	defer cancel()
	id, err := r.in.reg.Elect(ctx, election)
	return id, r.in.endErr(registryError(ctx, err))
}

func (r registryView) ElectionResult(ctx context.Context, election string) (ipl.IbisIdentifier, error) {
	ctx, cancel := r.in.bind(ctx)
	defer cancel()
	id, err := r.in.reg.ElectionResult(ctx, election)
	return id, r.in.endErr(registryError(ctx, err))
}

func (r registryView) Signal(ctx context.Context, signal string, to ...ipl.IbisIdentifier) error {
	if strings.HasPrefix(signal, reverseSignal) {
		return fmt.Errorf("signal %q: %w: signals beginning %q are Ibis's own (connection set-up)", signal, ipl.ErrInvalidArgument, reverseSignal)
	}
	ctx, cancel := r.in.bind(ctx)
	defer cancel()
	return r.in.endErr(registryError(ctx, r.in.reg.Signal(ctx, signal, to...)))
}

func (r registryView) Terminate(ctx context.Context) error {
	ctx, cancel := r.in.bind(ctx)
	defer cancel()
	return r.in.endErr(registryError(ctx, r.in.reg.Terminate(ctx)))
}

func (r registryView) WaitUntilTerminated(ctx context.Context) error {
	ctx, cancel := r.in.bind(ctx)
	defer cancel()
	return r.in.endErr(registryError(ctx, r.in.reg.WaitUntilTerminated(ctx)))
}

func (r registryView) Sequence(ctx context.Context, name string) (int64, error) {
	ctx, cancel := r.in.bind(ctx)
	defer cancel()
	n, err := r.in.reg.Sequence(ctx, name)
	return n, r.in.endErr(registryError(ctx, err))
}

func (r registryView) Events() <-chan ipl.Event { return r.in.events.out }

// registryError makes an error of the registry client match the ipl sentinel of the
// same meaning, keeping its text and everything it matched before (the registry's own
// sentinels, context.DeadlineExceeded). ctx is the call's context as bound to the
// instance: ended by the instance closing, it makes the error ErrClosed. A lost
// registry needs nothing: registry.ErrRegistryLost is ipl.ErrRegistryLost.
func registryError(ctx context.Context, err error) error {
	var sentinel error
	switch {
	case err == nil, errors.Is(err, ipl.ErrRegistryLost):
		return err
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), ipl.ErrClosed), errors.Is(err, registry.ErrClosed):
		sentinel = ipl.ErrClosed
	case errors.Is(err, context.DeadlineExceeded):
		sentinel = ipl.ErrTimeout
	case errors.Is(err, registry.ErrNotClosedWorld):
		sentinel = ipl.ErrUnsupported
	case errors.Is(err, registry.ErrInvalid):
		sentinel = ipl.ErrInvalidArgument
	case errors.Is(err, registry.ErrNotMember):
		sentinel = ipl.ErrNotMember
	case errors.Is(err, registry.ErrTooLarge), errors.Is(err, registry.ErrTooManyRequests):
		sentinel = ipl.ErrTooLarge
	default:
		return err
	}
	if errors.Is(err, sentinel) {
		return err
	}
	return &dualError{sentinel: sentinel, err: err}
}

// portCtx bounds a registry step of a port method: by the caller's ctx, by the connect
// timeout when ctx has no deadline, and by the instance's end (bind).
func (in *Instance) portCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return in.bind(ctx)
	}
	tctx, tcancel := context.WithTimeout(ctx, in.cfg.ConnectTimeout)
	bctx, bcancel := in.bind(tctx)
	return bctx, func() { bcancel(); tcancel() }
}

// bind derives a context that also ends when the instance ends (or when one of the
// extra channels closes, such as a port's), so that no blocking call outlives the Ibis.
func (in *Instance) bind(ctx context.Context, also ...<-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	var extra <-chan struct{}
	if len(also) > 0 {
		extra = also[0]
	}
	go func() {
		select {
		case <-in.done:
			cancel(ipl.ErrClosed)
		case <-extra:
			cancel(ipl.ErrClosed)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}
