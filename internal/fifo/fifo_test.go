package fifo

import (
	"sync"
	"testing"
)

func TestOrderAcrossProducers(t *testing.T) {
	q := New[int]()
	const producers, each = 4, 1000
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				q.Push(p*each + i)
			}
		}()
	}
	go func() { wg.Wait(); q.Close() }()
	last := make([]int, producers)
	for i := range last {
		last[i] = -1
	}
	n := 0
	for {
		v, ok := q.Pop(nil)
		if !ok {
			break
		}
		p, i := v/each, v%each
		if i <= last[p] {
			t.Fatalf("producer %d: %d after %d", p, i, last[p])
		}
		last[p] = i
		n++
	}
	if n != producers*each {
		t.Fatalf("popped %d of %d", n, producers*each)
	}
	if q.Push(1) {
		t.Fatalf("a closed queue took an item")
	}
}

func TestBoundedDropsOldest(t *testing.T) {
	q := New[int]()
	for i := range 5 {
		if dropped := q.PushBounded(i, 3); dropped != (i >= 3) {
			t.Fatalf("push %d: dropped %v", i, dropped)
		}
	}
	got, closed := q.Take(nil)
	if closed || len(got) != 3 || got[0] != 2 || got[2] != 4 {
		t.Fatalf("take: %v %v", got, closed)
	}
	if _, ok := q.TryPop(); ok {
		t.Fatalf("an empty queue popped")
	}
}

func TestPopStops(t *testing.T) {
	q := New[string]()
	stop := make(chan struct{})
	close(stop)
	if _, ok := q.Pop(stop); ok {
		t.Fatalf("Pop ignored stop")
	}
	q.Push("x")
	select {
	case <-q.Wake():
	default:
		t.Fatalf("Push left no wake-up")
	}
}
