package ipl

import (
	"context"
	"fmt"
	"slices"

	"go.uber.org/zap"
)

// New creates an Ibis instance: it reads the options and then the environment for what
// they left unset, checks the capabilities, picks the implementation (by name, or the
// first whose capabilities cover the Ibis capabilities and every declared port type;
// when none does, the error lists what each one lacks), joins the pool and returns the
// running instance. ctx bounds the start-up, including joining the pool; a ctx without
// deadline is bounded by DefaultJoinTimeout.
func New(ctx context.Context, opts ...Option) (Ibis, error) {
	cfg := &Config{}
	for _, o := range opts {
		o(cfg)
	}
	if err := cfg.ApplyEnvironment(nil); err != nil {
		return nil, err
	}
	cfg.applyDefaults()
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	for _, c := range cfg.Capabilities {
		if !IsIbisCapability(c) {
			if IsPortCapability(c) {
				return nil, fmt.Errorf("ipl: %q is a port capability; put it in a PortType given with WithPortTypes", c)
			}
			return nil, fmt.Errorf("ipl: unknown Ibis capability %q", c)
		}
	}
	for i, pt := range cfg.PortTypes {
		if pt.IsZero() {
			return nil, fmt.Errorf("%w: port type %d is the zero PortType; make it with NewPortType", ErrInvalidPortType, i)
		}
	}
	if cfg.PoolSize > 0 && !slices.Contains(cfg.Capabilities, ClosedWorld) {
		cfg.Capabilities = append(cfg.Capabilities, ClosedWorld)
	}
	if err := cfg.checkProperties(); err != nil {
		return nil, err
	}
	e, err := choose(cfg)
	if err != nil {
		return nil, err
	}
	cfg.Implementation = e.name
	if e.name == "mp" {
		cfg.undoLaunch() // mp makes its pool from the MPI job
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultJoinTimeout)
		defer cancel()
	}
	ib, err := e.drv.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("ipl: starting %s: %w", e.name, err)
	}
	return ib, nil
}
