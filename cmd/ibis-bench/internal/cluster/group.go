package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/applaunch"
	"github.com/ibisgo/ibis/internal/launch"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

// election is the name of the election that picks the coordinator.
const election = "ibis-bench/coordinator"

// Settings say how this process finds its pool and what every member runs.
type Settings struct {
	// Registry is an existing pool's registry (host:port); "" starts peers and an
	// embedded registry here.
	Registry string
	// Pool and Size name the existing pool and its closed-world size.
	Pool string
	Size int
	// Impl and Props choose the implementation and its properties for every member.
	Impl  string
	Props map[string]string
	// Args is the command line started peers run (subcommand first).
	Args []string
	// Stderr receives started peers' standard error, each line with the peer's launch
	// index in front as ibis-run writes it ("[0] ..."); nil discards it.
	Stderr io.Writer
	// Log receives diagnostics (nil: none).
	Log *zap.Logger
}

// Spec is what an experiment needs of its pool.
type Spec struct {
	// Members is the number of processes to start the pool with (coordinator
	// included) when the suite starts its own peers; in an existing pool, at least
	// MinMembers must be there.
	Members, MinMembers int
	// PortTypes are the port types the experiment creates ports of.
	PortTypes []ipl.PortType
	// Tag labels this process's instance.
	Tag string
}

// Group is this process's place in the experiment's pool.
type Group struct {
	// Ibis is this process's instance in the pool.
	Ibis ipl.Ibis
	// Ctx ends when Close is called or when a member this one depends on left or
	// died: for the coordinator any other member, for a peer the coordinator.
	Ctx context.Context
	// Coordinator is the elected coordinator; IsCoordinator says whether it is us.
	Coordinator   ipl.IbisIdentifier
	IsCoordinator bool
	// Peers are the other members (not the coordinator) in join order; Index is this
	// member's position among them (-1 for the coordinator).
	Peers []ipl.IbisIdentifier
	Index int

	registryAddr, pool string
	cancel             context.CancelCauseFunc
	srv                *registry.Server
	peers              *launch.Group      // the peer processes this one started; nil if none
	peerExits          chan launch.Status // every started peer's end, as it happens
	log                *zap.Logger
	closeOnce          sync.Once
	closeErr           error
	mu                 sync.Mutex
	coordID            string
	started            bool
}

// RegistryAddr returns the pool's registry address, for experiments that start
// additional Ibis instances (for example many workers per process).
func (g *Group) RegistryAddr() string { return g.registryAddr }

// Pool returns the pool's name; experiments derive the names of sub-pools from it.
func (g *Group) Pool() string { return g.pool }

// Join puts this process into the experiment's pool and returns when every member has
// joined and the coordinator is known. Without a registry in s it starts an embedded
// registry and spec.Members-1 peer processes (this process becomes the coordinator).
func Join(ctx context.Context, s Settings, spec Spec) (*Group, error) {
	log := s.Log
	if log == nil {
		log = zap.NewNop()
	}
	if spec.MinMembers == 0 {
		spec.MinMembers = spec.Members
	}
	g := &Group{Index: -1, log: log}
	gctx, cancel := context.WithCancelCause(context.Background())
	g.Ctx, g.cancel = gctx, cancel
	own := s.Registry == ""
	size := s.Size
	if own {
		sopts, err := applaunch.ServerOptions(spec.Members) // the environment's secret and TLS
		if err != nil {
			cancel(nil)
			return nil, err
		}
		srv, err := registry.StartEmbedded("127.0.0.1:0", sopts...)
		if err != nil {
			cancel(nil)
			return nil, fmt.Errorf("starting the embedded registry: %w", err)
		}
		g.srv = srv
		g.registryAddr = srv.Addr()
		g.pool = fmt.Sprintf("ibis-bench-%d-%d", os.Getpid(), time.Now().UnixNano())
		size = spec.Members
	} else {
		g.registryAddr, g.pool = s.Registry, s.Pool
		if size <= 0 {
			cancel(nil)
			return nil, fmt.Errorf("%w: an existing pool must be closed-world (set -pool-size or %s)", ErrPoolSize, ipl.EnvPoolSize)
		}
		if size < spec.MinMembers {
			cancel(nil)
			return nil, fmt.Errorf("%w: this experiment needs at least %d members, the pool has %d", ErrPoolSize, spec.MinMembers, size)
		}
	}
	opts := []ipl.Option{
		ipl.WithRegistry(g.registryAddr), ipl.WithPool(g.pool), ipl.WithPoolSize(size),
		ipl.WithPortTypes(spec.PortTypes...), ipl.WithCapabilities(ipl.ElectionsStrict, ipl.MembershipTotallyOrdered),
		ipl.WithLogger(log), ipl.WithEventHandler(g.event), ipl.WithTag(spec.Tag),
	}
	if s.Impl != "" {
		opts = append(opts, ipl.WithImplementation(s.Impl))
	}
	for k, v := range s.Props {
		opts = append(opts, ipl.WithProperty(k, v))
	}
	ib, err := ipl.New(ctx, opts...)
	if err != nil {
		g.stopRegistry()
		cancel(nil)
		return nil, err
	}
	g.Ibis = ib
	fail := func(err error) (*Group, error) {
		_ = g.Close()
		return nil, err
	}
	coord, err := ib.Registry().Elect(ctx, election)
	if err != nil {
		return fail(fmt.Errorf("electing the coordinator: %w", err))
	}
	g.mu.Lock()
	g.coordID = coord.ID
	g.mu.Unlock()
	g.Coordinator = coord
	g.IsCoordinator = coord.ID == ib.Identifier().ID
	if own {
		if err := g.startPeers(s, size-1); err != nil {
			return fail(err)
		}
	}
	if err := g.waitClosed(ctx); err != nil {
		return fail(fmt.Errorf("waiting for %d members to join: %w", size, err))
	}
	for _, m := range ib.Registry().Members() {
		if m.ID == coord.ID {
			continue
		}
		if m.ID == ib.Identifier().ID {
			g.Index = len(g.Peers)
		}
		g.Peers = append(g.Peers, m)
	}
	g.mu.Lock()
	g.started = true
	g.mu.Unlock()
	return g, nil
}

// event is the instance's registry event handler: it ends Ctx when a member this one
// depends on goes away.
func (g *Group) event(ev ipl.Event) {
	if ev.Type != ipl.EventLeft && ev.Type != ipl.EventDied {
		return
	}
	g.mu.Lock()
	coord := g.coordID
	g.mu.Unlock()
	if coord == "" {
		return
	}
	self := ""
	if g.Ibis != nil {
		self = g.Ibis.Identifier().ID
	}
	switch {
	case ev.Member.ID == coord && ev.Type == ipl.EventLeft && coord != self:
		g.cancel(ErrCoordinatorLeft)
	case coord == self || ev.Member.ID == coord:
		how := "left"
		if ev.Type == ipl.EventDied {
			how = "died"
		}
		g.cancel(fmt.Errorf("%w: member %s (%s) %s", ErrMemberGone, ev.Member.ID, ev.Member.Tag, how))
	}
}

// PeerDone turns a peer's final error into its result: a peer whose coordinator left
// cleanly has done its part whatever it was waiting for, so that is success.
func (g *Group) PeerDone(err error) error {
	if err == nil || errors.Is(g.Err(), ErrCoordinatorLeft) {
		return nil
	}
	return g.Wrap(err)
}

// Err returns why Ctx ended (nil while it has not), for error messages that say
// which member went away rather than just "context canceled".
func (g *Group) Err() error {
	if g.Ctx.Err() == nil {
		return nil
	}
	return context.Cause(g.Ctx)
}

// Wrap returns err, or, when Ctx has ended because a member went away, that reason
// with err's text: an experiment's last word before it gives up.
func (g *Group) Wrap(err error) error {
	if err == nil {
		return nil
	}
	if cause := g.Err(); cause != nil && errors.Is(cause, ErrMemberGone) && !errors.Is(err, ErrMemberGone) {
		return fmt.Errorf("%w (%v)", cause, err)
	}
	return err
}

// Close leaves the pool and, in the coordinator of a pool it started, waits for its
// peer processes to exit (killing those that do not within a grace period) and stops
// the embedded registry. It returns the first peer failure, if any.
func (g *Group) Close() error {
	g.closeOnce.Do(func() {
		g.mu.Lock()
		g.coordID = "" // leaving is not a failure of the others
		g.mu.Unlock()
		// Leaving first tells the peers the run is over (they see the coordinator
		// leave and end cleanly), whether or not they got the last command.
		if g.Ibis != nil {
			if err := g.Ibis.Close(); err != nil {
				g.log.Debug("closing the instance", zap.Error(err))
			}
		}
		g.cancel(context.Canceled)
		g.closeErr = g.waitPeers()
		g.stopRegistry()
	})
	return g.closeErr
}

func (g *Group) stopRegistry() {
	if g.srv != nil {
		_ = g.srv.Close()
	}
}

// Others returns every member but this one, the coordinator first.
func (g *Group) Others() []ipl.IbisIdentifier {
	out := []ipl.IbisIdentifier{}
	if !g.IsCoordinator {
		out = append(out, g.Coordinator)
	}
	self := g.Ibis.Identifier().ID
	for _, p := range g.Peers {
		if p.ID != self {
			out = append(out, p)
		}
	}
	return slices.Clip(out)
}
