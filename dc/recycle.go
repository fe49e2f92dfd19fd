package dc

import "reflect"

// taskPool is one kind's recycled tasks on one worker, linked through next. A spawn
// that is not stolen takes its task from here and its parent's return puts it back, so
// spawning allocates nothing in the steady state; the pool is not generic, so that
// giving tasks back needs no call through an interface.
type taskPool struct {
	head *task
	n    int
	// scrub: the kind's argument or result holds pointers, dropped on the way back.
	scrub bool
}

// maxFree bounds each pool: what a burst of spawns allocated beyond it goes to the
// garbage collector.
const maxFree = 1 << 12

// take pops a task from the pool of kind id, or returns nil (small enough to be inlined
// into Spawn, which does the rest).
func (c *Ctx) take(id int) *task {
	if id < len(c.pools) {
		if p := c.pools[id]; p != nil && p.head != nil {
			t := p.head
			p.head = t.next
			p.n--
			return t
		}
	}
	return nil
}

// newJob makes a task of this kind that goes back to c's pool.
//
//go:noinline
func (k *Kind[A, R]) newJob(c *Ctx) *job[A, R] {
	if k.id >= len(c.pools) {
		c.pools = append(c.pools, make([]*taskPool, k.id+1-len(c.pools))...)
	}
	p := c.pools[k.id]
	if p == nil {
		p = &taskPool{scrub: k.scrub}
		c.pools[k.id] = p
	}
	j := &job[A, R]{kind: k}
	j.body = j
	j.pool = p
	return j
}

// releaseKids gives the tasks of t's children back to their pools once t has returned:
// their futures are not to be used after that.
func (t *task) releaseKids() {
	for k := t.kids; k != nil; {
		next := k.next
		if p := k.pool; p != nil && p.n < maxFree {
			if p.scrub {
				k.body.clear()
			}
			if k.failed != nil {
				k.failed = nil // a job that recovered from its Sync's panic
			}
			k.parent = nil
			k.next = p.head
			p.head = k
			p.n++
		}
		k = next
	}
	t.kids = nil
}

// hasPointers reports whether a value of type T holds pointers (a string, a slice, a
// map, an interface do): a pool that keeps such a value keeps what it points to alive.
func hasPointers[T any]() bool { return typeHasPointers(reflect.TypeFor[T]()) }

func typeHasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && typeHasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if typeHasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	default:
		return true
	}
}
