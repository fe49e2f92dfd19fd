package nio

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// socketPair returns the two ends of a connected non-blocking stream socket pair,
// closed when the test ends.
func socketPair(t *testing.T) (a, b int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = unix.Close(fds[0])
		_ = unix.Close(fds[1])
	})
	return fds[0], fds[1]
}

// TestLoopPollSeesItsConnection: a loop's poll reports the connection it served when
// that one alone has bytes (the loop reads them itself), and hands back to gnet when
// another connection of the loop has bytes or a task of ours waits; a connection
// removed from the loop no longer counts.
func TestLoopPollSeesItsConnection(t *testing.T) {
	ls := loopSpinFor(t, time.Minute) // long enough never to run out here
	mine, minePeer := socketPair(t)
	other, otherPeer := socketPair(t)
	ls.add(mine)
	ls.add(other)

	send(t, minePeer)
	if !ls.await(mine) {
		t.Fatal("the poll missed bytes on its own connection")
	}
	drain(t, mine)

	send(t, otherPeer)
	if ls.await(mine) {
		t.Fatal("the poll kept the loop while another connection had bytes")
	}
	drain(t, other)

	ls.taskQueued()
	send(t, minePeer)
	if ls.await(mine) {
		t.Fatal("the poll kept the loop while a flush waited for it")
	}
	ls.taskRan()
	drain(t, mine)

	ls.remove(other)
	send(t, otherPeer)
	send(t, minePeer)
	if !ls.await(mine) { // also a slot to poll with: the polls before gave theirs back
		t.Fatal("a connection removed from the loop still ends its polls")
	}
}

// TestLoopPollGoesCold: a poll that runs out leaves the loop cold; a cold loop does not
// poll after traffic that comes long after the traffic before, and polls again after
// traffic that comes within sockets.Rewarm spins of it.
func TestLoopPollGoesCold(t *testing.T) {
	short := loopSpinFor(t, time.Millisecond)
	silent, _ := socketPair(t)
	short.add(silent)
	if short.await(silent) || !short.cold {
		t.Fatal("a poll of a silent connection did not run out and leave the loop cold")
	}

	ls := loopSpinFor(t, time.Minute)
	mine, minePeer := socketPair(t)
	ls.add(mine)
	send(t, minePeer)
	ls.cold, ls.last = true, time.Now().Add(-time.Hour)
	if ls.await(mine) {
		t.Fatal("a cold loop polled after traffic an hour after the one before")
	}
	if !ls.await(mine) || ls.cold { // the bytes are there: a poll reports them
		t.Fatal("a cold loop did not poll after traffic right after the one before")
	}
}

func loopSpinFor(t *testing.T, spin time.Duration) *loopSpin {
	t.Helper()
	ls, err := newLoopSpin(spin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ls.close)
	return ls
}

func send(t *testing.T, fd int) {
	t.Helper()
	if _, err := unix.Write(fd, []byte("x")); err != nil {
		t.Fatal(err)
	}
}

func drain(t *testing.T, fd int) {
	t.Helper()
	if _, err := unix.Read(fd, make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
}

// TestLoopPollOff: an engine with a spin of 0 has no polling state, and a nil state
// never polls.
func TestLoopPollOff(t *testing.T) {
	e := &engine{spin: 0}
	ls := e.spinOf(nil)
	if ls != nil {
		t.Fatal("a spin of 0 made a polling state")
	}
	ls.add(0)
	ls.remove(0)
	ls.taskQueued()
	ls.taskRan()
	if ls.await(0) {
		t.Fatal("a nil polling state polled")
	}
}

// TestLoopPollFreezes: missLimit polls in a row that ran out freeze the loop's polling,
// bytes or not, until the thaw; a thawed loop polls again and bears twice missLimit
// misses before the next freeze, which lasts twice as long unless a poll hit between.
func TestLoopPollFreezes(t *testing.T) {
	ls := loopSpinFor(t, time.Millisecond)
	mine, minePeer := socketPair(t)
	ls.add(mine)
	runOut := func(n int) {
		t.Helper()
		for i := range n {
			ls.cold = false // as if traffic came soon: poll
			if ls.await(mine) {
				t.Fatalf("poll %d reported bytes on a silent connection", i)
			}
		}
	}
	runOut(missLimit)
	if ls.thaw.IsZero() || ls.freeze != minFreeze {
		t.Fatalf("after %d polls that ran out: thaw %v, freeze %v; want a freeze of %v", missLimit, ls.thaw, ls.freeze, minFreeze)
	}
	send(t, minePeer)
	ls.cold = false
	if ls.await(mine) {
		t.Fatal("a frozen loop polled")
	}
	ls.thaw = time.Now().Add(-time.Millisecond)
	if !ls.await(mine) || !ls.thaw.IsZero() {
		t.Fatal("a thawed loop did not poll")
	}
	drain(t, mine)
	if ls.freeze != 0 || ls.missed != 0 {
		t.Fatalf("a hit left freeze %v and %d misses", ls.freeze, ls.missed)
	}

	runOut(missLimit) // a new streak
	ls.thaw = time.Now().Add(-time.Millisecond)
	runOut(2*missLimit - 1)
	if !ls.thaw.IsZero() {
		t.Fatal("a thawed loop froze again before twice missLimit misses")
	}
	runOut(1)
	if ls.thaw.IsZero() || ls.freeze != 2*minFreeze {
		t.Fatalf("the freeze after a thaw without a hit lasts %v, want %v", ls.freeze, 2*minFreeze)
	}
}
