package nio

import (
	"errors"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ibisgo/ibis/impl/internal/sockets"
)

// Polling event loops. An event loop with nothing to do blocks in epoll_wait, and waking
// its thread when the next message comes costs most of a small message's round trip
// (docs/PERFORMANCE.md, impl/nio). So once it has pushed an inbound connection's bytes,
// the loop polls for a while (pollFor) before it returns to gnet, as the blocking flavour's
// readers poll their socket (impl/internal/sockets/spin.go): it asks an epoll set of its
// own, which holds the loop's inbound connections, without waiting, and yields between
// asks, so that the receiver it just woke runs on its thread at once. When the same
// connection has bytes again (the answer to the message the receiver sent), the loop
// reads them itself there and then; when any other connection has, or a task of ours
// waits for the loop (a flush), it returns to gnet, which serves them in its next
// epoll_wait. Anything else gnet has to do (a close, an enrolment, an asynchronous
// write) is not seen by the polls: it waits until the loop returns to gnet, after at
// most maxPollRounds polls of pollFor each while the same connection keeps answering
// within them (64 x 40 µs at the default spin).
//
// A loop polls for twice nio.spin (pollFor): the answer it waits for passes through the
// peer's loop and its receiver, and a poll of one reader's spin ran out often enough to
// leave the loops cold (docs/PERFORMANCE.md has the figures).
//
// It adapts as a SpinReader does: a loop whose poll ran out goes cold and returns to gnet
// at once, until traffic comes within sockets.Rewarm spins of the traffic before (a poll
// a little longer would have caught it). Both ends of a connection have to poll for
// either to find its answer within a spin, so the rule that brings a cold loop back
// looks at how soon the traffic comes, not at polls. On a loaded machine the traffic
// comes soon enough to rewarm the loops, yet the polls run out all the same, and each
// takes a CPU from the threads that would answer; so missLimit polls in a row that ran
// out freeze the loop's polling for a while (minFreeze, doubling while freezes follow
// each other without a hit, up to maxFreeze). A loop that thaws waits for twice
// missLimit misses before it freezes again: the peer froze after this loop did, and
// thaws that much later. A polling loop holds one of the process's polling slots
// (sockets.TrySpin, at most half its Ps), or does not poll. A spin of 0 turns it off.

// maxPollRounds bounds the answers a loop reads in one OnTraffic: a connection that
// keeps answering within a poll would otherwise keep gnet from its own tasks (closes,
// enrolments, stopping), which do not end a poll.
const maxPollRounds = 64

// Freezing: see above.
const (
	missLimit = 16
	minFreeze = 5 * time.Millisecond
	maxFreeze = 160 * time.Millisecond
)

// pollFor is how long a loop polls when the readers of the blocking flavour poll for
// spin (0: never).
func pollFor(spin time.Duration) time.Duration { return 2 * spin }

// loopSpin is the polling state of one event loop of an engine.
type loopSpin struct {
	spin time.Duration
	epfd int // the loop's inbound connections, level-triggered for reading

	// tasks counts our tasks queued for the loop and not yet run (execFlush): a poll
	// ends when one waits.
	tasks atomic.Int32

	// Used on the loop only.
	cold   bool          // the last poll ran out: the loop returns at once until traffic is near
	last   time.Time     // while cold, when the loop last served traffic
	missed int           // polls in a row that ran out (from -missLimit after a thaw)
	thaw   time.Time     // while frozen, when polling may start again; zero otherwise
	freeze time.Duration // the last freeze, doubled by the next unless a poll hit since
	events [4]unix.EpollEvent
}

func newLoopSpin(spin time.Duration) (*loopSpin, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &loopSpin{spin: spin, epfd: fd}, nil
}

// add watches the inbound connection fd; on the loop, from OnOpen. A socket the set
// cannot take is only not polled.
func (ls *loopSpin) add(fd int) {
	if ls == nil {
		return
	}
	_ = unix.EpollCtl(ls.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)})
}

// remove stops watching fd; on the loop, from OnClose, while gnet still has fd open.
func (ls *loopSpin) remove(fd int) {
	if ls == nil {
		return
	}
	_ = unix.EpollCtl(ls.epfd, unix.EPOLL_CTL_DEL, fd, nil)
}

// await polls after the loop served the inbound connection fd; on the loop, from
// OnTraffic, with no lock held. It reports true when fd, and no other connection of the
// loop, has bytes: the caller reads them and awaits again. false: return to gnet
// (other work waits, the poll ran out, the loop is cold or no slot is free).
func (ls *loopSpin) await(fd int) bool {
	if ls == nil || ls.tasks.Load() > 0 {
		return false
	}
	if !ls.thaw.IsZero() {
		if time.Now().Before(ls.thaw) {
			return false
		}
		ls.thaw, ls.missed = time.Time{}, -missLimit
	}
	if ls.cold {
		now := time.Now()
		near := now.Sub(ls.last) < sockets.Rewarm*ls.spin
		ls.last = now
		if !near {
			return false
		}
		ls.cold = false
	}
	if !sockets.TrySpin() {
		return false
	}
	defer sockets.EndSpin()
	start := time.Now()
	for {
		runtime.Gosched() // the receiver this traffic woke runs first, here
		n, err := unix.EpollWait(ls.epfd, ls.events[:], 0)
		switch {
		case n == 1 && ls.events[0].Fd == int32(fd):
			ls.missed, ls.freeze = 0, 0
			return true
		case n > 0, err != nil && !errors.Is(err, unix.EINTR), ls.tasks.Load() > 0:
			return false
		}
		if now := time.Now(); now.Sub(start) >= ls.spin {
			ls.cold, ls.last = true, now
			if ls.missed++; ls.missed >= missLimit {
				ls.freeze = min(max(2*ls.freeze, minFreeze), maxFreeze)
				ls.thaw, ls.missed = now.Add(ls.freeze), 0
			}
			return false
		}
	}
}

// taskQueued counts a task of ours queued for the loop, so that a poll under way ends
// and the loop runs it; taskRan counts it run (or refused).
func (ls *loopSpin) taskQueued() {
	if ls != nil {
		ls.tasks.Add(1)
	}
}

func (ls *loopSpin) taskRan() {
	if ls != nil {
		ls.tasks.Add(-1)
	}
}

// close releases the epoll set once the loop has stopped.
func (ls *loopSpin) close() { _ = unix.Close(ls.epfd) }
