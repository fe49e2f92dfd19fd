//go:build mpi

package mp

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/ibisgo/ibis/impl/internal/core"
	"github.com/ibisgo/ibis/impl/mp/internal/mpi"
	"github.com/ibisgo/ibis/ipl"
	"github.com/ibisgo/ibis/registry"
)

const (
	// addrPrefix starts the address an instance publishes: "mpi:" and its rank.
	addrPrefix = "mpi:"
	// recvDirectMin is the size from which an incoming message is left in MPI until
	// the reader asks for it, to be received straight into the reader's memory.
	recvDirectMin = 64 << 10
	// sendDirectMin is the size from which a buffer of a packet is handed to MPI in
	// place (pinned, no copy) as a message of its own; runs of smaller buffers are
	// gathered by copying, into messages of at most gatherMax bytes.
	sendDirectMin = 64 << 10
	// gatherMax is the largest gathered message: smaller than recvDirectMin, so
	// that the acceptor receives every gathered message at once and the dialler's
	// credit (credit.go) covers them all.
	gatherMax = recvDirectMin - 1
	// maxChunk is the largest MPI message: MPI counts are C ints, so larger buffers
	// go as several messages.
	maxChunk = 1 << 30
	// asyncSends bounds the gathered (copied) sends that may be in flight at once;
	// WritePacket returns as soon as MPI has such a send, since the caller's memory
	// is no longer involved.
	asyncSends = 1024
	// failedOpenStop bounds the final barrier when Open fails half-way.
	failedOpenStop = 10 * time.Second
)

// transport is the core.Transport over MPI (see the package doc).
type transport struct {
	eng      *mpi.Engine
	world    mpi.World
	log      *zap.Logger
	maxConn  uint32
	embedded *registry.Server
	stopWait time.Duration
	waitSpin time.Duration // how long a goroutine polls for the engine's answer before it blocks
	opened   atomic.Bool

	acc   core.Acceptor
	slots chan struct{}
	// lateSmall completes the small sends MPI did not finish at once (smallsend.go).
	lateSmall mpi.Completion

	// mu guards the sets of live streams and the closing. Lock order: mu is a leaf,
	// never held while waiting for the engine or a stream (Close collects the streams
	// under it and closes them after); the engine's handler takes it in spawn.
	mu      sync.Mutex
	closed  bool
	closing chan struct{}
	ins     map[*inStream]struct{}
	outs    map[*outStream]struct{}
	wg      sync.WaitGroup

	// Used only under the engine's progress lock (in closures given to Do, and in
	// the handler).
	inByKey   map[uint64]*inStream
	outByKey  map[uint64]*outStream
	cancelled map[uint64]struct{}
	nextConn  uint32
}

// LaunchRank is this process's rank in MPI_COMM_WORLD, for ipl.LaunchRankOf.
func (t *transport) LaunchRank() int { return t.world.Rank }

// tombstone marks a connection closed on the accepting side whose end (an empty
// message) the dialler has not sent yet; later data for it is dropped.
var tombstone = &inStream{}

func newTransport(eng *mpi.Engine, log *zap.Logger, embedded *registry.Server, o options) *transport {
	w := eng.World()
	t := &transport{
		eng:       eng,
		world:     w,
		log:       log,
		maxConn:   maxConnID(w.TagUB),
		embedded:  embedded,
		stopWait:  o.closeTimeout,
		waitSpin:  o.waitSpin,
		slots:     make(chan struct{}, asyncSends),
		closing:   make(chan struct{}),
		ins:       map[*inStream]struct{}{},
		outs:      map[*outStream]struct{}{},
		inByKey:   map[uint64]*inStream{},
		outByKey:  map[uint64]*outStream{},
		cancelled: map[uint64]struct{}{},
	}
	t.lateSmall = mpi.Func(t.smallSent)
	return t
}

// smallSent is told when a small send that MPI did not finish at once has ended
// (under the engine's progress lock).
func (t *transport) smallSent(err error) {
	if err != nil {
		t.log.Warn("a send failed", zap.Error(err))
	}
}

// Capabilities: mp has no data sockets to secure (its registry connection speaks TLS
// when the pool does), and its streams take read deadlines.
func (t *transport) Capabilities() core.Capabilities {
	return core.Capabilities{TLS: true, DirectReads: true}
}

// Start installs the engine's message handler and returns this rank's address.
func (t *transport) Start(acc core.Acceptor) (string, error) {
	t.acc = acc
	if !t.eng.Do(func(l *mpi.Loop) { l.SetHandler(t.incoming) }) {
		return "", fmt.Errorf("mp: starting: %w", ipl.ErrClosed)
	}
	return addrPrefix + strconv.Itoa(t.world.Rank), nil
}

// parseAddr returns the rank an address names.
func (t *transport) parseAddr(addr string) (int, error) {
	r, ok := strings.CutPrefix(addr, addrPrefix)
	n, err := strconv.Atoi(r)
	if !ok || err != nil || n < 0 || n >= t.world.Size {
		return 0, fmt.Errorf("%w: %q is not the address of a rank of this MPI job (mpi:0 to mpi:%d)", ipl.ErrRefused, addr, t.world.Size-1)
	}
	return n, nil
}

// spawn runs f on a goroutine that Close waits for; it refuses once Close has begun.
func (t *transport) spawn(f func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		f()
	}()
	return true
}

func (t *transport) track(s *inStream, out *outStream) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	if s != nil {
		t.ins[s] = struct{}{}
	}
	if out != nil {
		t.outs[out] = struct{}{}
	}
	return true
}

func (t *transport) untrack(s *inStream, out *outStream) {
	t.mu.Lock()
	if s != nil {
		delete(t.ins, s)
	}
	if out != nil {
		delete(t.outs, out)
	}
	t.mu.Unlock()
}

// recvInto receives a deferred message into buf and waits for MPI to finish.
func (t *transport) recvInto(m mpi.Message, buf []byte) error {
	var rerr error
	done := make(chan struct{}, 1)
	if !t.eng.Do(func(l *mpi.Loop) {
		l.Recv(m, buf, func(err error) {
			rerr = err
			done <- struct{}{}
		})
	}) {
		return fmt.Errorf("mp: receiving: %w", ipl.ErrClosed)
	}
	if !t.eng.Await(done, t.spinFor(len(buf))) {
		unblock := t.eng.Blocking()
		select {
		case <-done:
			unblock()
		case <-t.eng.Done():
			unblock()
			return fmt.Errorf("mp: receiving %d bytes from rank %d: %w", m.Size, m.Src, ipl.ErrClosed)
		}
	}
	if err := rerr; err != nil {
		return fmt.Errorf("mp: receiving %d bytes from rank %d: %w", m.Size, m.Src, err)
	}
	return nil
}

// spinFor is how long to poll for the engine to finish moving n bytes: waitSpin, and
// for a large transfer as long as it may take at 1 GB/s, so that the waiter is still
// polling when MPI is done instead of being woken later through the scheduler.
func (t *transport) spinFor(n int) time.Duration {
	return t.waitSpin + time.Duration(n)*time.Nanosecond
}

// allocConn picks a free connection number for a dial to peer (under the engine's
// progress lock).
func (t *transport) allocConn(peer int) uint32 {
	for {
		c := t.nextConn
		t.nextConn++
		if t.nextConn > t.maxConn {
			t.nextConn = 0
		}
		if _, used := t.outByKey[connKey(peer, c)]; !used {
			return c
		}
	}
}

// Close ends every connection, waits for the transport's goroutines, then stops the
// engine, which waits in a barrier for every rank to close too before MPI_Finalize.
func (t *transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	close(t.closing)
	ins := make([]*inStream, 0, len(t.ins))
	for s := range t.ins {
		ins = append(ins, s)
	}
	outs := make([]*outStream, 0, len(t.outs))
	for out := range t.outs {
		outs = append(outs, out)
	}
	t.mu.Unlock()
	for _, out := range outs {
		_ = out.Close()
	}
	for _, s := range ins {
		_ = s.Close()
	}
	t.wg.Wait()
	wait := t.stopWait
	if !t.opened.Load() {
		wait = min(wait, failedOpenStop)
	}
	var errs []error
	if err := t.eng.Stop(wait); err != nil {
		errs = append(errs, fmt.Errorf("mp: finalising MPI: %w", err))
	}
	if t.embedded != nil {
		if err := t.embedded.Close(); err != nil {
			errs = append(errs, fmt.Errorf("mp: closing the embedded registry: %w", err))
		}
	}
	return errors.Join(errs...)
}
