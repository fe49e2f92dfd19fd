package core

import (
	"context"

	"github.com/ibisgo/ibis/ipl"
)

// registryView is the ipl.Registry of an Instance: the registry client's services plus
// the instance's own event queue.
type registryView struct{ in *Instance }

func (r registryView) Members() []ipl.IbisIdentifier { return r.in.reg.Members() }
func (r registryView) PoolSize() int                 { return r.in.reg.PoolSize() }

func (r registryView) WaitUntilPoolClosed(ctx context.Context) error {
	ctx, cancel := r.in.bind(ctx)
	defer cancel()
	return r.in.reg.WaitUntilPoolClosed(ctx)
}

func (r registryView) Elect(ctx context.Context, election string) (ipl.IbisIdentifier, error) {
	ctx, cancel := r.in.bind(ctx)
	defer cancel()
	return r.in.reg.Elect(ctx, election)
}

func (r registryView) ElectionResult(ctx context.Context, election string) (ipl.IbisIdentifier, error) {
	ctx, cancel := r.in.bind(ctx)
	defer cancel()
	return r.in.reg.ElectionResult(ctx, election)
}

func (r registryView) Signal(ctx context.Context, signal string, to ...ipl.IbisIdentifier) error {
	ctx, cancel := r.in.bind(ctx)
	defer cancel()
	return r.in.reg.Signal(ctx, signal, to...)
}

func (r registryView) Terminate(ctx context.Context) error {
	ctx, cancel := r.in.bind(ctx)
	defer cancel()
	return r.in.reg.Terminate(ctx)
}

func (r registryView) WaitUntilTerminated(ctx context.Context) error {
	ctx, cancel := r.in.bind(ctx)
	defer cancel()
	return r.in.reg.WaitUntilTerminated(ctx)
}

func (r registryView) Sequence(ctx context.Context, name string) (int64, error) {
	ctx, cancel := r.in.bind(ctx)
	defer cancel()
	return r.in.reg.Sequence(ctx, name)
}

func (r registryView) Events() <-chan ipl.Event { return r.in.events.out }

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
