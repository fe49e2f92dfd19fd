package dc

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func newTasks(n int) []*task {
	ts := make([]*task, n)
	for i := range ts {
		ts[i] = &task{epoch: int64(i)}
	}
	return ts
}

// TestDequeOrder checks the owner's LIFO end and the thieves' FIFO end, across a growth
// of the ring.
func TestDequeOrder(t *testing.T) {
	d := newDeque()
	ts := newTasks(200)
	for _, x := range ts {
		d.push(x)
	}
	for i := range 50 {
		if got := d.steal(); got != ts[i] {
			t.Fatalf("steal %d: got task %v, want %d", i, got, i)
		}
	}
	for i := 199; i >= 50; i-- {
		if got := d.pop(); got != ts[i] {
			t.Fatalf("pop: got task %v, want %d", got, i)
		}
	}
	if got := d.pop(); got != nil {
		t.Fatalf("pop of an empty deque: %v", got)
	}
	if got := d.steal(); got != nil {
		t.Fatalf("steal from an empty deque: %v", got)
	}
}

// TestDequeConcurrent runs the owner against several thieves (under -race, the
// detector checks the slots' accesses) and checks that every task is taken exactly once,
// whatever the interleaving.
func TestDequeConcurrent(t *testing.T) {
	const rounds, perRound = 200, 100
	d := newDeque()
	ts := newTasks(rounds * perRound)
	stealRace(t, ts, d.steal, func(take func(*task)) {
		for r := range rounds {
			for _, x := range ts[r*perRound : (r+1)*perRound] {
				d.push(x)
			}
			// Pop half of what was pushed; the thieves take from the other end meanwhile.
			for range perRound / 2 {
				if x := d.pop(); x != nil {
					take(x)
				}
			}
		}
		// pop returns nil only once the deque is empty.
		for x := d.pop(); x != nil; x = d.pop() {
			take(x)
		}
	})
}

// stealRace runs owner, which takes tasks of ts itself and must have emptied its queue
// when it returns, against three thieves calling steal until then, and checks that
// every task of ts was taken exactly once.
func stealRace(t *testing.T, ts []*task, steal func() *task, owner func(take func(*task))) {
	t.Helper()
	taken := make([]atomic.Int32, len(ts))
	take := func(x *task) { taken[x.epoch].Add(1) }
	var ownerDone atomic.Bool
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for {
				done := ownerDone.Load()
				if x := steal(); x != nil {
					take(x)
					continue
				}
				if done {
					return // nothing left and nothing more will come
				}
				runtime.Gosched()
			}
		})
	}
	owner(take)
	ownerDone.Store(true)
	wg.Wait()
	for i := range taken {
		if n := taken[i].Load(); n != 1 {
			t.Errorf("task %d taken %d times", i, n)
		}
	}
}

// BenchmarkDeque is the owner's push and pop of one task (the deque's share of a spawn
// that is not stolen) and a thief's steal of one (with the owner's push of it).
func BenchmarkDeque(b *testing.B) {
	b.Run("pushpop", func(b *testing.B) {
		d := newDeque()
		x := &task{}
		for b.Loop() {
			d.push(x)
			d.pop()
		}
	})
	b.Run("steal", func(b *testing.B) {
		d := newDeque()
		ts := newTasks(1024)
		for i := 0; b.Loop(); i++ {
			if i%len(ts) == 0 {
				for _, x := range ts {
					d.push(x)
				}
			}
			d.steal()
		}
	})
}
