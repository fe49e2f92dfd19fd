package dc

import "sync/atomic"

// deque is a work-stealing deque (Chase and Lev, "Dynamic circular work-stealing deque",
// SPAA 2005): its owner, the worker, pushes and pops at the bottom (the newest, smallest
// jobs) without a lock in the common case; thieves, the dispatcher serving steal requests,
// take from the top (the oldest, largest jobs) with a compare-and-swap.
//
// The indices and the slots are atomic. A thief may read a slot while the owner reuses
// it; the value is thrown away when the thief's compare-and-swap of top fails. Atomic
// slots make that read well-defined in Go's memory model, and so the race detector
// checks the code that runs in production.
type deque struct {
	top    atomic.Int64 // next to steal; only grows
	bottom atomic.Int64 // next free slot; only the owner writes it
	ring   atomic.Pointer[ring]
}

// ring is the deque's circular buffer; its size is a power of two.
type ring struct {
	mask  int64
	slots []atomic.Pointer[task]
}

func newRing(size int64) *ring {
	return &ring{mask: size - 1, slots: make([]atomic.Pointer[task], size)}
}

func (r *ring) at(i int64) *atomic.Pointer[task] { return &r.slots[i&r.mask] }

func newDeque() *deque {
	d := &deque{}
	d.ring.Store(newRing(64))
	return d
}

// push adds t at the bottom (owner only), growing the ring when it is full.
func (d *deque) push(t *task) { d.pushAll([]*task{t}) }

// pushAll adds ts at the bottom, oldest first, with one store of the bottom index (owner
// only), growing the ring as needed.
func (d *deque) pushAll(ts []*task) {
	b := d.bottom.Load()
	top := d.top.Load()
	r := d.ring.Load()
	n := int64(len(ts))
	if b+n-top > r.mask+1 {
		size := r.mask + 1
		for b+n-top > size {
			size *= 2
		}
		g := newRing(size)
		for i := top; i < b; i++ {
			g.at(i).Store(r.at(i).Load())
		}
		d.ring.Store(g)
		r = g
	}
	for i, t := range ts {
		r.at(b + int64(i)).Store(t)
	}
	d.bottom.Store(b + n)
}

// pop takes the newest job at the bottom (owner only), or nil when a thief got the last
// one first or the deque is empty.
func (d *deque) pop() *task {
	b := d.bottom.Load() - 1
	d.bottom.Store(b)
	top := d.top.Load()
	if b < top {
		d.bottom.Store(top)
		return nil
	}
	t := d.ring.Load().at(b).Load()
	if b > top {
		return t
	}
	// The last job: race the thieves for it.
	if !d.top.CompareAndSwap(top, top+1) {
		t = nil
	}
	d.bottom.Store(top + 1)
	return t
}

// steal takes the oldest job at the top (any goroutine), or nil when there is none or
// another thief, or the owner, took it first.
func (d *deque) steal() *task {
	for {
		top := d.top.Load()
		b := d.bottom.Load()
		if top >= b {
			return nil
		}
		t := d.ring.Load().at(top).Load()
		if d.top.CompareAndSwap(top, top+1) {
			return t
		}
	}
}
