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
// another connection of the loop has bytes, when a task of ours waits, or when nothing
// comes within the spin; a poll that ran out makes the loop skip the polls after its
// next traffic, twice as many each time in a row, and a hit ends the skipping.
func TestLoopPollSeesItsConnection(t *testing.T) {
	ls, err := newLoopSpin(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer ls.close()
	mine, minePeer := socketPair(t)
	other, otherPeer := socketPair(t)
	ls.add(mine)
	ls.add(other)
	send := func(fd int) {
		t.Helper()
		if _, err := unix.Write(fd, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	drain := func(fd int) {
		t.Helper()
		if _, err := unix.Read(fd, make([]byte, 16)); err != nil {
			t.Fatal(err)
		}
	}

	send(minePeer)
	if !ls.await(mine) {
		t.Fatal("the poll missed bytes on its own connection")
	}
	drain(mine)

	send(otherPeer)
	if ls.await(mine) {
		t.Fatal("the poll kept the loop while another connection had bytes")
	}
	drain(other)

	ls.taskQueued()
	send(minePeer)
	if ls.await(mine) {
		t.Fatal("the poll kept the loop while a flush waited for it")
	}
	ls.taskRan()
	drain(mine)

	for i, skip := range []int{1, 3, 7} {
		if ls.await(mine) {
			t.Fatalf("poll %d reported bytes on a silent connection", i)
		}
		if ls.skip != skip {
			t.Fatalf("after %d polls in a row ran out the loop skips %d, want %d", i+1, ls.skip, skip)
		}
		for range skip {
			send(minePeer)
			if ls.await(mine) {
				t.Fatal("a loop that skips polls polled")
			}
			drain(mine)
		}
	}
	send(minePeer)
	if !ls.await(mine) {
		t.Fatal("the poll after the skipped ones missed bytes on its own connection")
	}
	drain(mine)
	if ls.missed != 0 {
		t.Fatalf("a hit left %d misses counted", ls.missed)
	}

	ls.remove(other)
	send(otherPeer)
	send(minePeer)
	if !ls.await(mine) { // also a slot to poll with: the polls before gave theirs back
		t.Fatal("a connection removed from the loop still ends its polls")
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
