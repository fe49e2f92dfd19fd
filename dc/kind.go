package dc

import (
	"fmt"
	"sync"
)

// Kind is a kind of job: a Go function from an argument of type A to a result of type R,
// registered under a name that is the same in every process of the pool (a stolen job
// travels as its kind's name and its argument). Define kinds at package level, before
// Run, so that every process knows every kind.
type Kind[A, R any] struct {
	name string
	id   int // its number, an index into each worker's spare tasks
	fn   func(*Ctx, A) R
	// scrub says that A or R holds pointers: a recycled task lets go of them.
	scrub bool
}

// kindInfo is what the receiving side of a steal needs of a kind, whatever its types.
type kindInfo interface {
	kindName() string
	// receive builds the task of a job stolen from another process, reading its argument.
	receive(m reader) (*task, error)
}

// kinds holds every defined kind by name, as gob's type registry does: a stolen job
// names its kind, and the thief's binary must know it.
var kinds = struct {
	sync.RWMutex
	byName map[string]kindInfo
	n      int
}{byName: map[string]kindInfo{}}

// Define registers a kind of job under name and returns it. fn computes the job's result;
// it may Spawn more jobs and must Sync before it returns when it did. A second kind of
// the same name is a programming error and panics, as flag and expvar do; define kinds
// in package variables or init functions:
//
//	var fib *dc.Kind[int, int]
//
//	func init() { fib = dc.Define("fib", fibJob) }
//
// A and R travel as Ibis objects (msgpack: exported fields, msgpack tags) when a job is
// stolen, so they must survive encoding.
func Define[A, R any](name string, fn func(c *Ctx, arg A) R) *Kind[A, R] {
	if name == "" || len(name) > maxKindName {
		panic(fmt.Sprintf("dc: Define(%q): a kind's name has 1 to %d bytes", name, maxKindName))
	}
	if fn == nil {
		panic(fmt.Sprintf("dc: Define(%q): nil function", name))
	}
	kinds.Lock()
	defer kinds.Unlock()
	if _, dup := kinds.byName[name]; dup {
		panic(fmt.Sprintf("dc: Define(%q): a kind of that name exists already", name))
	}
	k := &Kind[A, R]{name: name, id: kinds.n, fn: fn, scrub: hasPointers[A]() || hasPointers[R]()}
	kinds.n++
	kinds.byName[name] = k
	return k
}

// lookupKind finds a kind by the name a steal reply carries.
func lookupKind(name string) (kindInfo, bool) {
	kinds.RLock()
	defer kinds.RUnlock()
	k, ok := kinds.byName[name]
	return k, ok
}

// Name returns the kind's name.
func (k *Kind[A, R]) Name() string { return k.name }

func (k *Kind[A, R]) kindName() string { return k.name }

// Spawn starts a job of this kind as a child of the job c runs, and returns its future.
// The job waits in c's work queue: Sync runs it as a plain call unless an idle process
// has stolen it first, in which case its result comes back over the network. The
// future's Value is ready after the next Sync, and valid until the spawning job returns.
func (k *Kind[A, R]) Spawn(c *Ctx, arg A) *Future[R] {
	c.check()
	var j *job[A, R]
	if c.sp < len(c.slots) { // the task in the slot, if it is of this kind
		// (two kinds of the same types share the Go type: the kind decides)
		if j, _ = c.slots[c.sp].body.(*job[A, R]); j != nil && j.kind != k {
			j = nil
		}
	}
	if j == nil {
		j = k.trade(c)
	}
	c.sp++
	if j.failed != nil {
		j.failed = nil // a job that recovered from its Sync's panic
	}
	j.arg = arg
	p := c.cur
	j.parent = p
	j.epoch = p.syncs
	p.open++
	if k.scrub {
		p.scrubKids = true
	}
	c.stats.Spawned++
	if !c.dq.pushFast(&j.task) {
		c.dq.pushSlow(&j.task)
	}
	return &j.Future
}

// Call runs a job of this kind at once, as a plain function call, in c's job.
func (k *Kind[A, R]) Call(c *Ctx, arg A) R { return k.fn(c, arg) }

// Future is the result of a spawned job, ready after the Sync that follows its Spawn.
type Future[R any] struct {
	task
	res R
}

// Value returns the job's result. It is ready after the Sync that follows the Spawn,
// until the job that spawned it returns (then its task is recycled); calling it before
// that Sync is a programming error and panics.
func (f *Future[R]) Value() R {
	if f.parent == nil || f.parent.syncs <= f.epoch {
		panic("dc: Future.Value before Sync, or after the spawning job returned")
	}
	return f.res
}

// job is a spawned job of one kind: its future (task and result), kind and argument.
type job[A, R any] struct {
	Future[R]
	kind *Kind[A, R]
	arg  A
}

func (j *job[A, R]) run(c *Ctx)                 { j.res = j.kind.fn(c, j.arg) }
func (j *job[A, R]) clear()                     { j.arg, j.res = *new(A), *new(R) }
func (j *job[A, R]) kindOf() kindInfo           { return j.kind }
func (j *job[A, R]) writeArg(m writer) error    { return m.WriteObject(j.arg) }
func (j *job[A, R]) writeResult(m writer) error { return m.WriteObject(j.res) }
func (j *job[A, R]) readResult(m reader) error  { return m.ReadObject(&j.res) }

func (k *Kind[A, R]) receive(m reader) (*task, error) {
	j := &job[A, R]{kind: k}
	j.body = j
	j.kindID = k.id
	if err := m.ReadObject(&j.arg); err != nil {
		return nil, fmt.Errorf("the argument of a %q job: %w", k.name, err)
	}
	return &j.task, nil
}
