package mpj

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibisgo/ibis/ipl"
)

// World is the world communicator (MPI_COMM_WORLD) of a closed-world pool, together
// with the machinery every communicator of the process shares: the receive port, the
// send ports to the peers, the matching engine and the goroutines that drain the port
// and send acknowledgements. Its Comm methods (Rank, Send, Bcast, ...) act on the world
// communicator. Close (or Finalize) ends it; no goroutine of mpj outlives Close.
type World struct {
	*Comm
	ib       ipl.Ibis
	ownsIbis bool
	// slot is this process's index in the join order; ports and members are by slot.
	slot    int
	members []ipl.IbisIdentifier
	ports   []ipl.SendPort
	rp      ipl.ReceivePort
	eng     *engine

	life context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	ctxMu   sync.Mutex
	nextCtx uint32 // the lowest context id this process has not used

	syncMu   sync.Mutex
	syncNext int64
	syncWait map[int64]syncWaiter
	syncErr  error

	ackMu   sync.Mutex
	acks    []header
	ackWake chan struct{}

	// ranks holds the world rank of each slot once Init has agreed on them (read by
	// connection upcalls, which may come before).
	ranks atomic.Pointer[[]int]

	closing   atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// Option configures Init.
type Option func(*config)

type config struct{ rank int }

// WithRank sets this process's rank in the world, overriding the launcher's (see the
// package documentation for the rule). Either every process of the pool gives one, and
// together they are 0..size-1, or none does; Init fails with ErrRanks otherwise.
func WithRank(r int) Option { return func(c *config) { c.rank = r } }

// Context ids: the set-up communicator (join order) uses 0 and 1, the world 2 and 3;
// every communicator has an even id for point-to-point and the next odd one for its
// collectives, so that a program's messages never match a collective's.
const (
	ctxSetup     = 0
	ctxWorld     = 2
	firstFreeCtx = 4
)

// New creates an Ibis for mpj (opts as for ipl.New, plus mpj's port type) and returns
// its world; Close of the world closes the Ibis too. A program started without a
// registry and without a pool size (no launcher) is a world of one, as an MPI program
// started without mpirun is a singleton, instead of an open pool Init would refuse.
func New(ctx context.Context, opts ...ipl.Option) (*World, error) {
	opts = slices.Clone(opts)
	var cfg ipl.Config
	for _, o := range opts {
		o(&cfg)
	}
	// Under mp the MPI job is the pool (a configured size would only be ignored).
	if err := cfg.ApplyEnvironment(os.LookupEnv); err == nil && cfg.Registry == "" && cfg.PoolSize == 0 &&
		cfg.Implementation != "mp" {
		opts = append(opts, ipl.WithPoolSize(1))
	}
	opts = append(opts, ipl.WithPortTypes(PortType))
	ib, err := ipl.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("mpj: creating the Ibis: %w", err)
	}
	w, err := Init(ctx, ib)
	if err != nil {
		return nil, errors.Join(err, ib.Close())
	}
	w.ownsIbis = true
	return w, nil
}

// Init makes the world communicator of ib's pool, which must be closed-world (a pool
// size); every process of the pool must call it, as MPI_Init. It waits until the pool
// is complete, connects a send port to every peer, and agrees on the ranks. ib must
// have declared PortType; the Ibis stays the caller's to close, after the world.
func Init(ctx context.Context, ib ipl.Ibis, opts ...Option) (*World, error) {
	cfg := config{rank: -1}
	for _, o := range opts {
		o(&cfg)
	}
	reg := ib.Registry()
	size := reg.PoolSize()
	if size <= 0 {
		return nil, fmt.Errorf("%w (set IBIS_POOL_SIZE, -pool-size or ipl.WithPoolSize, or start it with ibis-run)", ErrOpenPool)
	}
	if err := reg.WaitUntilPoolClosed(ctx); err != nil {
		return nil, fmt.Errorf("mpj: waiting for the pool's %d members: %w", size, err)
	}
	members := slices.Clone(reg.Members())
	if len(members) != size {
		return nil, fmt.Errorf("%w: mpj: the pool has %d members, its size is %d (one left or died before Init)",
			ipl.ErrNotMember, len(members), size)
	}
	sort.SliceStable(members, func(i, j int) bool { return members[i].Number() < members[j].Number() })
	w := &World{ib: ib, members: members, slot: -1, ports: make([]ipl.SendPort, size),
		syncWait: map[int64]syncWaiter{}, ackWake: make(chan struct{}, 1), nextCtx: firstFreeCtx}
	for i, m := range members {
		if m == ib.Identifier() {
			w.slot = i
		}
	}
	if w.slot < 0 {
		return nil, fmt.Errorf("%w: mpj: this instance %s is not among the pool's members", ipl.ErrNotMember, ib.Identifier())
	}
	w.life, w.stop = context.WithCancel(context.Background())
	w.eng = newEngine(w.queueAck)
	if err := w.start(ctx); err != nil {
		return nil, errors.Join(err, w.Close())
	}
	ranks, err := w.agreeRanks(ctx, cfg.rank)
	if err != nil {
		return nil, errors.Join(err, w.Close())
	}
	slots := make([]int, size)
	for s, r := range ranks {
		slots[r] = s
	}
	w.Comm = &Comm{w: w, ctx: ctxWorld, rank: ranks[w.slot], slots: slots}
	w.ranks.Store(&ranks)
	return w, nil
}

// start creates the receive port, starts the dispatcher and the ack sender, and
// connects a send port to every peer (in parallel: each Connect waits until the peer
// has created its port).
func (w *World) start(ctx context.Context) error {
	rp, err := w.ib.CreateReceivePort(ctx, PortType, portName, ipl.WithConnectionHandler(connHandler{w}))
	if err != nil {
		return fmt.Errorf("mpj: creating the receive port: %w", err)
	}
	w.rp = rp
	w.wg.Add(2)
	go w.dispatch()
	go w.ackLoop()
	errs := make([]error, len(w.members))
	var wg sync.WaitGroup
	for s, m := range w.members {
		if s == w.slot {
			continue
		}
		sp, err := w.ib.CreateSendPort(PortType, "mpj-to-"+m.ID)
		if err != nil {
			errs[s] = fmt.Errorf("mpj: creating the send port to %s: %w", m, err)
			continue
		}
		w.ports[s] = sp
		wg.Go(func() {
			if err := sp.Connect(ctx, m, portName); err != nil {
				errs[s] = fmt.Errorf("mpj: connecting to %s: %w", m, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// launchRank is this process's rank as its launcher says: the option, else what the
// Ibis or the launcher's environment says (ipl.LaunchRankOf: mp's MPI rank, IBIS_RANK,
// mpirun's, srun's); -1 when none says.
func (w *World) launchRank(opt int) int {
	if opt >= 0 {
		return opt
	}
	return ipl.LaunchRankOf(w.ib)
}

// agreeRanks gathers every process's launch rank over a set-up communicator in join
// order and returns the rank of each slot: the launch ranks when all have one and they
// are a permutation, the join order when none has one. Every process sees the same
// gathered values, so every process decides the same, including to fail.
func (w *World) agreeRanks(ctx context.Context, opt int) ([]int, error) {
	size := len(w.members)
	slots := make([]int, size)
	for i := range slots {
		slots[i] = i
	}
	setup := &Comm{w: w, ctx: ctxSetup, rank: w.slot, slots: slots}
	all := make([]int64, size)
	if err := setup.Allgather(ctx, []int64{int64(w.launchRank(opt))}, all); err != nil {
		return nil, fmt.Errorf("mpj: agreeing on ranks: %w", err)
	}
	ranks := make([]int, size)
	seen := make([]bool, size)
	none := 0
	for s, r := range all {
		switch {
		case r < 0:
			none++
			ranks[s] = s
		case r >= int64(size) || seen[r]:
			return nil, fmt.Errorf("%w: launch ranks by join order %v: not a permutation of 0..%d", ErrRanks, all, size-1)
		default:
			seen[r] = true
			ranks[s] = int(r)
		}
	}
	if none != 0 && none != size {
		return nil, fmt.Errorf("%w: launch ranks by join order %v: only some processes have one", ErrRanks, all)
	}
	return ranks, nil
}

// peekContext returns the lowest context id not used yet by this process (the
// caller takes the maximum over a communicator's ranks, see agreeContext).
func (w *World) peekContext() uint32 {
	w.ctxMu.Lock()
	defer w.ctxMu.Unlock()
	return w.nextCtx
}

// useContext records that ids below id+2 are taken.
func (w *World) useContext(id uint32) {
	w.ctxMu.Lock()
	defer w.ctxMu.Unlock()
	w.nextCtx = max(w.nextCtx, id+2)
}

// Implementation names the Ibis implementation the world runs on ("tcp", "nio",
// "mp"), for reports and logs.
func (w *World) Implementation() string { return w.ib.Implementation() }

// Ibis returns the Ibis the world runs on, for what mpj does not offer (the registry,
// ports of the program's own).
func (w *World) Ibis() ipl.Ibis { return w.ib }

// Finalize is MPI_Finalize: a barrier, so that no process tears down its ports while
// another still needs a message from it, and then Close. Use it at the normal end of a
// program; use Close on error paths, where the others may never reach the barrier.
func (w *World) Finalize(ctx context.Context) error {
	var berr error
	if w.Comm != nil {
		if err := w.Barrier(ctx); err != nil {
			berr = fmt.Errorf("mpj: Finalize: %w", err)
		}
	}
	return errors.Join(berr, w.Close())
}

// Close ends the world at once, without waiting for the other processes: pending and
// later operations fail with ipl.ErrClosed, the ports close, mpj's goroutines end, and
// when New made the Ibis it is closed too. It is safe to call more than once.
func (w *World) Close() error {
	w.closeOnce.Do(func() {
		w.closing.Store(true)
		err := fmt.Errorf("%w: mpj: the world is closed", ipl.ErrClosed)
		w.fail(err)
		var errs []error
		for _, p := range w.ports {
			if p != nil {
				errs = append(errs, p.Close())
			}
		}
		if w.rp != nil {
			errs = append(errs, w.rp.Close())
		}
		if w.stop != nil {
			w.stop()
		}
		w.wg.Wait()
		if w.ownsIbis {
			// Ibis.Close leaves the connection handler's running calls to end on
			// their own; Wait makes sure none outlives the world.
			errs = append(errs, w.ib.Close())
			ctx, cancel := context.WithTimeout(context.Background(), handlersWait)
			errs = append(errs, w.ib.Wait(ctx))
			cancel()
		}
		w.closeErr = errors.Join(errs...)
	})
	return w.closeErr
}

// handlersWait bounds how long Close waits for the connection handler's calls still
// running as the Ibis closes (they do not block on the network).
const handlersWait = 10 * time.Second

// fail ends every pending and later operation with err.
func (w *World) fail(err error) {
	w.eng.fail(err)
	w.syncMu.Lock()
	if w.syncErr == nil {
		w.syncErr = err
	}
	for id, sw := range w.syncWait {
		sw.ch <- err
		delete(w.syncWait, id)
	}
	w.syncMu.Unlock()
}

// depart is a peer that closed its world cleanly (Close, or after Finalize): what
// waits for a message or an ack from it fails with an error matching
// ipl.ErrConnectionLost, and so do later sends to it and receives from it that no
// queued message satisfies.
func (w *World) depart(slot int) {
	who := fmt.Sprintf("the process %s", w.members[slot])
	if ranks := w.ranks.Load(); ranks != nil {
		who = fmt.Sprintf("peer rank %d", (*ranks)[slot])
	}
	err := fmt.Errorf("mpj: %s closed its world (Close without Finalize, or it finished): %w", who, ipl.ErrConnectionLost)
	w.eng.depart(slot, err)
	w.syncMu.Lock()
	for id, sw := range w.syncWait {
		if sw.slot == slot {
			sw.ch <- err
			delete(w.syncWait, id)
		}
	}
	w.syncMu.Unlock()
}

// connHandler turns a broken incoming connection into a failure of the world: the
// peer died or the network broke, and operations waiting for it would hang. A clean
// disconnect (a peer that closed its world) is not a failure of the world: the
// connection ends after the peer's last message, which the dispatcher has delivered
// by then, so only what still waits for that peer fails (see World.depart).
type connHandler struct{ w *World }

func (h connHandler) GotConnection(ipl.ReceivePort, ipl.SendPortIdentifier) bool { return true }

func (h connHandler) LostConnection(_ ipl.ReceivePort, from ipl.SendPortIdentifier, err error) {
	if h.w.closing.Load() {
		return
	}
	if err == nil {
		for s, m := range h.w.members {
			if m == from.Ibis && s != h.w.slot {
				h.w.depart(s)
			}
		}
		return
	}
	h.w.fail(h.w.peerLost(from.Ibis, err))
}
