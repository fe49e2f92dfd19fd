package dc

import (
	"testing"
)

// TestWorkQueueOrder checks that the private and public parts make one stack: the worker
// pops newest first, thieves take oldest first, and what a thief finds after it emptied
// the public part is every job again from the worker's next push or pop on.
func TestWorkQueueOrder(t *testing.T) {
	q := newWorkQueue()
	ts := newTasks(300) // more than the private slice's first size
	for i, x := range ts[:5] {
		q.push(x)
		if h := q.height(); h != int64(i+1) {
			t.Fatalf("height after %d pushes: %d", i+1, h)
		}
	}
	// The first push found the public part empty and published its job; the others stay
	// private while the public part holds it.
	if got := q.steal(); got != ts[0] {
		t.Fatalf("first steal: got %v, want task 0", got)
	}
	if got := q.steal(); got != nil {
		t.Fatalf("steal with the public part emptied: got task %d, want none until the worker's next push or pop", got.epoch)
	}
	if h := q.height(); h != 5 {
		t.Fatalf("height after a steal: %d, want 5 (a stolen job's place stays taken)", h)
	}
	q.push(ts[5]) // finds the public part empty: all private jobs go public
	for i := 1; i <= 5; i++ {
		if got := q.steal(); got != ts[i] {
			t.Fatalf("steal after the push: got %v, want task %d", got, i)
		}
	}
	for _, x := range ts[6:] {
		q.push(x)
	}
	for i := 299; i >= 6; i-- {
		if got := q.pop(); got != ts[i] {
			t.Fatalf("pop: got %v, want task %d", got, i)
		}
	}
	if got := q.pop(); got != nil {
		t.Fatalf("pop of an empty queue: task %d", got.epoch)
	}
	if got := q.steal(); got != nil {
		t.Fatalf("steal from an empty queue: task %d", got.epoch)
	}
}

// TestWorkQueueExpose checks that expose makes every private job stealable at once, in
// age order, and that the worker still pops the rest newest first.
func TestWorkQueueExpose(t *testing.T) {
	q := newWorkQueue()
	ts := newTasks(10)
	for _, x := range ts {
		q.push(x)
	}
	q.expose()
	for i := range 4 {
		if got := q.steal(); got != ts[i] {
			t.Fatalf("steal %d after expose: got %v", i, got)
		}
	}
	for i := 9; i >= 4; i-- {
		if got := q.pop(); got != ts[i] {
			t.Fatalf("pop after expose: got %v, want task %d", got, i)
		}
	}
	if got := q.pop(); got != nil {
		t.Fatalf("pop of the emptied queue: task %d", got.epoch)
	}
}

// TestWorkQueueStealExposes checks that a steal, even one that leaves public jobs, makes
// the worker's next push or pop publish every private job: while thieves take jobs, they
// find all of them.
func TestWorkQueueStealExposes(t *testing.T) {
	for _, next := range []string{"push", "pop"} {
		t.Run(next, func(t *testing.T) {
			q := newWorkQueue()
			ts := newTasks(8)
			q.push(ts[0]) // published: the public part was empty
			q.push(ts[1])
			q.push(ts[2])
			q.expose()
			for _, x := range ts[3:6] {
				q.push(x) // private: the public part holds 0 to 2
			}
			if got := q.steal(); got != ts[0] {
				t.Fatalf("steal: got %v, want task 0", got)
			}
			last := 6
			if next == "push" {
				q.push(ts[6])
			} else if got := q.pop(); got != ts[5] {
				t.Fatalf("pop: got %v, want task 5", got)
			} else {
				last = 4
			}
			for i := 1; i <= last; i++ {
				if got := q.steal(); got != ts[i] {
					t.Fatalf("steal after the worker's %s: got %v, want task %d", next, got, i)
				}
			}
			if got := q.steal(); got != nil {
				t.Fatalf("steal from the emptied queue: task %d", got.epoch)
			}
		})
	}
}

// TestWorkQueueConcurrent runs the worker's pushes, pops and exposes against several
// thieves (under -race the detector checks every shared access) and checks that every
// task is taken exactly once, whatever the interleaving.
func TestWorkQueueConcurrent(t *testing.T) {
	const rounds, perRound = 300, 100
	q := newWorkQueue()
	ts := newTasks(rounds * perRound)
	stealRace(t, ts, q.steal, func(take func(*task)) {
		for r := range rounds {
			for i, x := range ts[r*perRound : (r+1)*perRound] {
				q.push(x)
				if i%7 == 3 {
					if x := q.pop(); x != nil { // a spawn and its Sync, now and then
						take(x)
					}
				}
			}
			if r%10 == 9 {
				q.expose()
			}
			// Pop half of what is left; the thieves take from the other end meanwhile.
			for range perRound / 3 {
				if x := q.pop(); x != nil {
					take(x)
				}
			}
		}
		// pop returns nil only once the queue is empty.
		for x := q.pop(); x != nil; x = q.pop() {
			take(x)
		}
	})
}

// BenchmarkWorkQueue is the worker's push and pop of one task while the public part
// holds a job, the common case of a spawn that is not stolen.
func BenchmarkWorkQueue(b *testing.B) {
	q := newWorkQueue()
	q.push(&task{}) // published: the public part is not empty
	x := &task{}
	for b.Loop() {
		q.push(x)
		q.pop()
	}
}
