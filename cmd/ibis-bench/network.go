package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/cluster"
	"github.com/ibisgo/ibis/cmd/ibis-bench/internal/report"
)

// quitTimeout bounds telling the peers that the run is over.
const quitTimeout = 5 * time.Second

// coordinatorFunc is a network experiment's measurement, run by the coordinator with
// a link to each peer; ctx ends when the user interrupts or a member goes away.
type coordinatorFunc func(ctx context.Context, g *cluster.Group, links []*link) (*report.Report, error)

// runNetwork runs a network experiment: it joins (or starts) a pool of members
// processes, at least minMembers in an existing pool; the coordinator runs measure,
// every other member serves it until the run ends and returns a nil report.
func (e *env) runNetwork(ctx context.Context, members, minMembers int, measure coordinatorFunc) (*report.Report, error) {
	g, err := e.joinBench(ctx, members, minMembers)
	if err != nil {
		return nil, err
	}
	if !g.IsCoordinator {
		err := runPeer(g, e)
		return nil, errors.Join(err, g.Close())
	}
	e.Log.Debug("coordinator") // where a -v user sees which process measures
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(g.Ctx, func() { cancel(g.Err()) })
	defer stop()
	impl := g.Ibis.Implementation()
	links, err := openLinks(ctx, g, -1)
	var rep *report.Report
	if err == nil {
		rep, err = measure(ctx, g, links)
		qctx, qcancel := context.WithTimeout(context.WithoutCancel(ctx), quitTimeout)
		closeLinks(qctx, links)
		qcancel()
	}
	err = g.Wrap(err)
	if cerr := g.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if rep != nil {
		rep.Set("implementation", impl)
		rep.Set("members", len(g.Peers)+1)
		if len(e.Props) > 0 {
			rep.Set("properties", e.Props)
		}
	}
	return rep, nil
}

// describe is the note every network report carries: what ran where.
func describe(g *cluster.Group, e *env) string {
	s := fmt.Sprintf("implementation %s, %d processes (separate OS processes", g.Ibis.Implementation(), len(g.Peers)+1)
	if e.pool.registry == "" {
		s += " started by ibis-bench"
	} else {
		s += " of pool " + g.Pool()
	}
	s += ")"
	for k, v := range e.Props {
		s += fmt.Sprintf(", %s=%s", k, v)
	}
	return s
}
