package core

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/registry"
)

// Global receive ports: their names are published in the registry when they are made
// and withdrawn when they close, both within the caller's context (portCtx).

// publishPort binds rp's name in the registry. On failure it closes rp, withdrawing
// the name again when the Bind may have reached the server before ctx ended, so that
// no name points at a port that was never made; that withdrawal has only the connect
// timeout and the instance's end as bounds, since ctx has ended.
func (in *Instance) publishPort(ctx context.Context, rp *ReceivePort) error {
	bctx, cancel := in.portCtx(ctx)
	defer cancel()
	err := bctx.Err() // an ended ctx sends nothing
	sent := err == nil
	if sent {
		err = in.reg.Bind(bctx, rp.name, rp.name)
	}
	if err == nil {
		return nil
	}
	var undo context.Context
	if sent && !errors.Is(err, registry.ErrAlreadyBound) {
		undo = context.WithoutCancel(ctx)
	}
	rp.close(undo)
	return fmt.Errorf("publishing receive port %q in the registry: %w", rp.name, in.endErr(registryError(bctx, err)))
}

// withdrawPort unbinds rp's name within ctx; a name it cannot withdraw stays bound until
// the instance leaves the pool. The instance's own Close leaves it to the registry,
// which drops a member's names when it leaves.
func (in *Instance) withdrawPort(ctx context.Context, rp *ReceivePort) {
	if in.closed.Load() {
		return
	}
	ctx, cancel := in.portCtx(ctx)
	defer cancel()
	err := ctx.Err() // an ended ctx sends nothing
	if err == nil {
		err = in.reg.Unbind(ctx, rp.name)
	}
	if err != nil {
		in.log.Debug("unbinding receive port", zap.String("port", rp.name), zap.Error(err))
	}
}
