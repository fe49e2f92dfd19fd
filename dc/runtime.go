package dc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/internal/wake"
	"github.com/ibisgo/ibis/ipl"
)

// Errors of a run, matchable with errors.Is.
var (
	// ErrJobFailed: a job of the run panicked (here or on the process that stole it).
	ErrJobFailed = errors.New("dc: a job failed")
	// ErrRunStopped: the root stopped the run before its end: the context of its Run
	// ended, or its Runtime or Ibis closed. No job failed.
	ErrRunStopped = errors.New("dc: the root stopped the run")
	// ErrRootDied: the process running the root job died or left before the run ended.
	ErrRootDied = errors.New("dc: the root process is gone")
	// ErrRunEnded: the run ended before this process could take part: it joined an open
	// pool late, or heard only of the pool's termination. (A closed-world member that
	// calls Run after the root's end reached it gets the root's result.)
	ErrRunEnded = errors.New("dc: the run ended without this process")
	// ErrRunOnce: Run was called a second time on one Runtime.
	ErrRunOnce = errors.New("dc: a Runtime runs once")
	// ErrCutOff: this process is out of the pool while the run goes on: the registry
	// declared it dead (it stopped answering for too long, say while it was stopped),
	// its Ibis ended under the run, or its registry is lost for good and another
	// process cannot be reached (no death would be reported any more). The others run
	// its jobs again; it ends.
	ErrCutOff = errors.New("dc: this process is cut off from the pool")
)

// Runtime is one process's part of a divide-and-conquer pool: its worker, its work
// queue, and the dispatcher that serves other processes' steal requests and receives
// results. Create it with New on every process of the pool, then call Run.
type Runtime struct {
	ib   ipl.Ibis
	self ipl.IbisIdentifier
	site string
	o    options
	log  *zap.Logger
	rp   ipl.ReceivePort
	w    *Ctx
	rng  *rand.Rand // the worker's

	life context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
	// flush, closed by Close, makes the emulated wide area send what it holds at once;
	// lateWG waits for that.
	flush  chan struct{}
	lateWG sync.WaitGroup

	mu          sync.Mutex
	members     map[string]ipl.IbisIdentifier // live peers by ID (not this process)
	dead        map[string]bool               // died or left
	died        map[string]bool               // died: no statistics will come
	peers       map[string]*peer
	outstanding map[int64]given      // jobs stolen from this process, by stamp
	waits       map[int64]*stealWait // this process's unanswered steal requests
	inbox       []*task              // jobs to run: stolen ones, and ones given up on
	nextStamp   int64
	nextReq     int64
	lastVictim  ipl.IbisIdentifier // whom this process last stole from (TRS)
	wan         wanState           // CRS's asynchronous wide-area steal
	statsIn     map[string]Stats   // the root's: the statistics members sent back
	statsWake   chan struct{}

	given       atomic.Int64 // jobs other processes stole from this one
	forwarded   atomic.Int64 // steal requests passed on (TRS)
	wideArea    atomic.Int64 // messages sent to another site
	requeued    atomic.Int64 // jobs run again because their thief died
	asyncSteals atomic.Int64 // wide-area steals of CRS that brought a job
	pubSpawned  atomic.Int64 // the worker's counts as last published (Progress)
	pubExecuted atomic.Int64

	// The connections the peers' send ports made, and of them the ones that took
	// another route than a direct dial (Stats.Connections...).
	conns, connsReversed, connsRelayed atomic.Int64

	// regLost is why the registry is lost for good (nil while it is not): the run
	// goes on while the other processes answer; a send that fails then ends it.
	regLost atomic.Pointer[string]

	wake      chan struct{} // news for the worker: a result, a job, the end
	ending    atomic.Bool
	endOnce   sync.Once
	ended     chan struct{}
	endCtx    context.Context // ends with the run: cuts short the sends only it needs
	endCancel context.CancelFunc
	// runStarted closes when Run has given the result its place (rootRes); doneEarly is
	// set (under mu) when the root's end came before that (see doneBeforeRun).
	runStarted chan struct{}
	doneEarly  bool
	endErr     error // why the run ended badly, set before ended closes
	rootRes    body  // where a msgDone's result goes
	rootID     ipl.IbisIdentifier
	ran        atomic.Bool
	closeOnce  sync.Once
	report     Report // the root's, after Run
}

// given is a job another process stole: who has it, to run it again here if it dies.
type given struct {
	t     *task
	thief string
}

// stealWait is an unanswered steal request.
type stealWait struct {
	victim string
	async  bool
	ch     chan stealAnswer // the worker's, for a synchronous request
}

type stealAnswer struct {
	ok    bool
	giver ipl.IbisIdentifier
}

// New makes ib's process a member of a divide-and-conquer pool: it creates the receive
// port and starts the dispatcher and the membership watcher. ib must have been created
// with IbisOptions and without an event handler (dc follows the pool through
// Registry().Events()). Close the Runtime before the Ibis.
func New(ctx context.Context, ib ipl.Ibis, opts ...Option) (*Runtime, error) {
	o := options{stealTimeout: 10 * time.Second, sendTimeout: 60 * time.Second}
	for _, f := range opts {
		f(&o)
	}
	if o.log == nil {
		o.log = zap.NewNop()
	}
	if o.stealTimeout <= 0 || o.sendTimeout <= 0 {
		return nil, fmt.Errorf("%w: dc: timeouts must be positive", ipl.ErrInvalidArgument)
	}
	seed := o.seed
	if seed == 0 {
		seed = time.Now().UnixNano() ^ int64(os.Getpid())<<20
	}
	self := ib.Identifier()
	rt := &Runtime{ib: ib, self: self, site: self.Tag, o: o, log: o.log.With(zap.String("member", self.ID)),
		rng:     rand.New(rand.NewPCG(uint64(seed), uint64(self.Number()))),
		members: map[string]ipl.IbisIdentifier{}, dead: map[string]bool{}, died: map[string]bool{}, peers: map[string]*peer{},
		outstanding: map[int64]given{}, waits: map[int64]*stealWait{}, statsIn: map[string]Stats{},
		statsWake: make(chan struct{}, 1), wake: make(chan struct{}, 1), ended: make(chan struct{}), flush: make(chan struct{})}
	rt.w = &Ctx{rt: rt, ending: &rt.ending, dq: newWorkQueue()}
	rt.w.stats.Process, rt.w.stats.Rank, rt.w.stats.Site = self.ID, ipl.LaunchRank(), self.Tag
	rt.life, rt.stop = context.WithCancel(context.Background())
	rt.endCtx, rt.endCancel = context.WithCancel(rt.life)
	rt.runStarted = make(chan struct{})
	for _, m := range ib.Registry().Members() {
		if m.ID != self.ID {
			rt.members[m.ID] = m
		}
	}
	rp, err := ib.CreateReceivePort(ctx, PortType, portName)
	if err != nil {
		rt.stop()
		return nil, fmt.Errorf("dc: creating the receive port: %w", err)
	}
	rt.rp = rp
	rt.wg.Add(2)
	go rt.dispatch()
	go rt.watch()
	rp.EnableConnections()
	_ = ctx
	return rt, nil
}

// Close stops the dispatcher and the membership watcher and closes the ports; the Ibis
// stays the caller's to close. A Run still going fails with ipl.ErrClosed.
func (rt *Runtime) Close() error {
	rt.end(fmt.Errorf("dc: %w", ipl.ErrClosed))
	rt.closeOnce.Do(func() {
		rt.mu.Lock()
		close(rt.flush)
		rt.mu.Unlock()
	})
	rt.lateWG.Wait()
	rt.stop()
	err := rt.rp.Close()
	rt.mu.Lock()
	peers := rt.peers
	rt.peers = map[string]*peer{}
	rt.mu.Unlock()
	for _, p := range peers {
		err = errors.Join(err, p.close())
	}
	rt.wg.Wait()
	if errors.Is(err, ipl.ErrClosed) {
		err = nil
	}
	return err
}

// poke tells the worker that something happened.
func (rt *Runtime) poke() {
	wake.Poke(rt.wake)
}

// end ends the run: err nil is the normal end (the result is in). Only the first call
// counts.
func (rt *Runtime) end(err error) {
	rt.endOnce.Do(func() {
		rt.endErr = err
		rt.ending.Store(true)
		close(rt.ended)
		rt.endCancel()
		rt.poke()
	})
}

// endedBy reports how the run ended, once it has.
func (rt *Runtime) endedBy() (error, bool) {
	select {
	case <-rt.ended:
		return rt.endErr, true
	default:
		return nil, false
	}
}

// takeInbox hands the worker the oldest job waiting in its inbox, or nil.
func (rt *Runtime) takeInbox() *task {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.inbox) == 0 {
		return nil
	}
	t := rt.inbox[0]
	rt.inbox[0] = nil
	rt.inbox = rt.inbox[1:]
	return t
}

// toInbox queues a job for the worker (rt.mu held).
func (rt *Runtime) toInbox(t *task) { rt.inbox = append(rt.inbox, t) }

// watch follows the pool's membership: joiners become victims, and the jobs a process
// that died or left had stolen are run again here.
func (rt *Runtime) watch() {
	defer rt.wg.Done()
	events := rt.ib.Registry().Events()
	for {
		select {
		case <-rt.life.Done():
			return
		case <-rt.ib.Done():
			// Closed under the run: by the program (which should close the Runtime
			// first), or by itself when the registry declared it dead.
			rt.cutOff(fmt.Errorf("the Ibis ended: %w", ipl.ErrClosed))
			return
		case ev, ok := <-events:
			if !ok {
				rt.cutOff(fmt.Errorf("the Ibis ended: %w", ipl.ErrClosed))
				return
			}
			switch ev.Type {
			case ipl.EventJoined:
				rt.joined(ev.Member)
			case ipl.EventLeft, ipl.EventDied:
				if ev.Member.ID == rt.self.ID {
					if ev.Type == ipl.EventDied {
						rt.cutOff(errors.New("the registry declared this process dead"))
					}
					continue
				}
				rt.lost(ev.Member, ev.Type)
			case ipl.EventTerminated:
				if !rt.endedEarly() {
					rt.end(ErrRunEnded)
				} // else the dispatcher holds the root's end for Run, and ends the run
			case ipl.EventRegistryLost:
				// Reconnecting: the registry may come back (a restarted ibis-registry),
				// and the pool's connections go on meanwhile. For good: see regLost.
				if why, ok := strings.CutPrefix(ev.Name, ipl.LostForGood); ok && rt.regLost.Swap(&why) == nil {
					rt.log.Warn("registry lost for good; going on while the other processes can be reached", zap.String("why", why))
					rt.wg.Go(rt.probe)
				}
			}
		}
	}
}

// cutOff ends the run on this process because it is out of the pool (ErrCutOff): the
// registry declared it dead, a member refused it as dead, its Ibis ended, or its
// registry is lost for good and a member cannot be reached (unreachable).
func (rt *Runtime) cutOff(why error) {
	err := fmt.Errorf("%w: %w", ErrCutOff, why)
	if _, over := rt.endedBy(); !over {
		rt.log.Warn("cut off from the pool; ending the run here", zap.Error(why))
	}
	rt.end(err)
}

// unreachable takes a failed send to id: with the registry lost for good, this process
// can no longer tell a dead process from a live one (no Died event would come, and a
// process the registry declared dead finds its connections cut, which is what a send
// to a dead one looks like too): it ends (ErrCutOff) rather than wait for ever for jobs
// nobody runs, or steal from processes that refuse it. With the registry there, the
// registry's events decide.
func (rt *Runtime) unreachable(id ipl.IbisIdentifier, err error) {
	why := rt.regLost.Load()
	if why == nil || errors.Is(err, errPeerGone) || errors.Is(err, errStopped) || rt.life.Err() != nil {
		return
	}
	rt.cutOff(fmt.Errorf("%w (%s), and %s cannot be reached: %w", ipl.ErrRegistryLost, *why, id, err))
}

func (rt *Runtime) joined(m ipl.IbisIdentifier) {
	if m.ID == rt.self.ID {
		return
	}
	rt.mu.Lock()
	if !rt.dead[m.ID] {
		rt.members[m.ID] = m
	}
	rt.mu.Unlock()
	rt.log.Debug("member joined", zap.Stringer("member", m))
}

// lost handles a process that died or left: every job it had stolen from here goes back
// into the inbox, a steal request waiting on it counts as refused, and the run fails
// when it held the root job.
func (rt *Runtime) lost(m ipl.IbisIdentifier, how ipl.EventType) {
	if m.ID == rt.self.ID {
		return
	}
	rt.mu.Lock()
	delete(rt.members, m.ID)
	rt.dead[m.ID] = true
	if how == ipl.EventDied {
		rt.died[m.ID] = true
	}
	requeued := 0
	for stamp, g := range rt.outstanding {
		if g.thief == m.ID {
			delete(rt.outstanding, stamp)
			rt.toInbox(g.t)
			// Counted before the worker can see it in the inbox (and finish the run).
			rt.requeued.Add(1)
			requeued++
		}
	}
	for req, w := range rt.waits {
		if w.victim != m.ID {
			continue
		}
		delete(rt.waits, req)
		if w.async {
			rt.wan.refused(time.Now(), false)
		} else {
			w.ch <- stealAnswer{}
		}
	}
	if rt.lastVictim.ID == m.ID {
		rt.lastVictim = ipl.IbisIdentifier{}
	}
	p := rt.peers[m.ID]
	delete(rt.peers, m.ID)
	isRoot := rt.rootID.ID == m.ID
	rt.mu.Unlock()
	if p != nil {
		rt.wg.Go(func() { _ = p.close() }) // it may be stuck in a send to the dead process
	}
	rt.log.Info("member gone", zap.Stringer("member", m), zap.Stringer("how", how), zap.Int("jobs to run again", requeued))
	if isRoot {
		rt.end(fmt.Errorf("%w: %s %s", ErrRootDied, m, how))
	}
	wake.Poke(rt.statsWake)
	rt.poke()
}

// alive reports whether id is a live member (or this process).
func (rt *Runtime) alive(id string) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return !rt.dead[id]
}
