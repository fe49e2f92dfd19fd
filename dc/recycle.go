package dc

import "reflect"

// The worker keeps the tasks of the jobs it spawns in a stack of slots (Ctx.slots), in
// the order of their spawns: a spawn takes the slot above the last one taken, and a
// job's return gives back every slot its children took (their futures are not to be
// used after that) by lowering the stack pointer. So a spawn that is not stolen
// allocates nothing, and recycling costs no work per child. A slot keeps its task for
// the next spawn at that place; a spawn of another kind trades it for a spare task of
// its own kind (Ctx.spares).

// maxFree is how many slots a worker keeps at least when it trims its stack after a
// job from another process or the root returns: what a burst of spawns allocated
// beyond that goes to the garbage collector.
const maxFree = 1 << 12

// trade puts a task of this kind in slot c.sp, for a spawn that found none of its kind
// there (Spawn takes the one there otherwise; kinds, not Go types, must match): a spare one, else a new one; the task
// that was there becomes a spare of its kind.
//
//go:noinline
func (k *Kind[A, R]) trade(c *Ctx) *job[A, R] {
	var j *job[A, R]
	if k.id < len(c.spares) && c.spares[k.id] != nil {
		t := c.spares[k.id]
		c.spares[k.id], t.next = t.next, nil
		j = t.body.(*job[A, R])
	} else {
		j = &job[A, R]{kind: k}
		j.body = j
		j.kindID = k.id
	}
	if c.sp == len(c.slots) {
		c.slots = append(c.slots, &j.task)
		return j
	}
	old := c.slots[c.sp]
	if old.kindID >= len(c.spares) {
		c.spares = append(c.spares, make([]*task, old.kindID+1-len(c.spares))...)
	}
	old.next, c.spares[old.kindID] = c.spares[old.kindID], old
	c.slots[c.sp] = &j.task
	return j
}

// release gives back the slots above mark when the job t, which started at mark,
// returns.
func (c *Ctx) release(t *task, mark int) {
	if t.scrubKids {
		c.scrub(t, mark)
	}
	c.sp = mark
}

// scrub makes t's children, in the slots above mark, let go of their arguments and
// results (their kinds hold pointers).
func (c *Ctx) scrub(t *task, mark int) {
	for _, k := range c.slots[mark:c.sp] {
		k.body.clear()
	}
	t.scrubKids = false
}

// abandon drops the slots from mark up, for a job that failed: its children may still be
// in the hands of other processes, whose results would land in them.
func (c *Ctx) abandon(mark int) {
	if mark < len(c.slots) {
		clear(c.slots[mark:])
		c.slots = c.slots[:mark]
	}
	c.sp = mark
}

// trim drops the slots a burst of spawns left far above the stack pointer.
func (c *Ctx) trim() {
	if keep := max(maxFree, 2*c.sp); len(c.slots) > keep {
		clear(c.slots[keep:])
		c.slots = c.slots[:keep]
	}
}

// hasPointers reports whether a value of type T holds pointers (a string, a slice, a
// map, an interface do): a slot that keeps such a value keeps what it points to alive.
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
