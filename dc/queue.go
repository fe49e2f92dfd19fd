package dc

import "sync/atomic"

// workQueue is a worker's queue of spawned jobs, split in two: the newest jobs lie in a
// private stack that only the worker touches (plain slice operations, no atomics), the
// oldest in the public Chase-Lev deque that the dispatcher steals from. A spawn and the
// pop of a job that was not stolen then cost no sequentially consistent store (Go has
// no weaker atomic store); those come only when jobs cross to the public part.
//
// Whenever the worker finds at a push or a pop (a plain load of the deque's top) that
// the public part is empty, or that a thief took a job from it since its last look, it
// publishes all its private jobs: a busy worker keeps its oldest, largest jobs where
// thieves can take them, as with one deque, and while thieves take jobs it keeps every
// job public from one push or pop to the next. What a thief cannot see are the jobs
// spawned since the worker's last such look, until its next push or pop; expose
// publishes them before a job waits for something outside dc. The worker pops public
// jobs only once its private stack is empty. Every public job is older than every
// private one, so together they are one stack, and a job's position in it (its height)
// stays when it is published.
type workQueue struct {
	priv []*task // priv[:n] are the private jobs, oldest first
	n    int
	// bottom is the public deque's bottom as the worker last set it (only it writes it);
	// seen is the deque's top at the worker's last look.
	bottom, seen int64
	top          *atomic.Int64 // &pub.top
	pub          *deque
}

func newWorkQueue() workQueue {
	d := newDeque()
	return workQueue{pub: d, top: &d.top, priv: make([]*task, 64)}
}

// height is the position above the newest job: jobs keep their positions when they are
// published or stolen (a stolen job's place stays taken), so Sync runs the jobs above
// its frame's height, which are its children.
func (q *workQueue) height() int64 { return q.bottom + int64(q.n) }

// push adds t as the newest job (the worker only).
func (q *workQueue) push(t *task) {
	if !q.pushFast(t) {
		q.pushSlow(t)
	}
}

// pushFast is push's common case, small enough to be inlined: it reports false, having
// done nothing, when the slice is full, the public part empty or a thief took a job.
func (q *workQueue) pushFast(t *task) bool {
	if top := q.top.Load(); q.n == len(q.priv) || top >= q.bottom || top != q.seen {
		return false
	}
	q.priv[q.n] = t
	q.n++
	return true
}

// pushSlow is push when the slice is full, the public part empty or a thief took a
// job since the worker's last look.
func (q *workQueue) pushSlow(t *task) {
	if q.n == len(q.priv) {
		q.priv = append(q.priv, make([]*task, len(q.priv))...)
	}
	q.priv[q.n] = t
	q.n++
	if top := q.top.Load(); top >= q.bottom || top != q.seen {
		q.expose()
	}
}

// pop takes the newest job (the worker only), or nil when there is none or a thief took
// the last public one first. A popped private slot keeps its pointer until a push
// overwrites it: the task is in its pool by then, or garbage that the slot holds for a
// while.
func (q *workQueue) pop() *task {
	if t := q.popFast(); t != nil {
		return t
	}
	return q.popSlow()
}

// popFast is pop's common case, small enough to be inlined: nil, having done nothing,
// when at most one private job is left, the public part is empty or a thief took a job.
func (q *workQueue) popFast() *task {
	n := q.n - 1
	if top := q.top.Load(); n <= 0 || top >= q.bottom || top != q.seen {
		return nil
	}
	q.n = n
	return q.priv[n]
}

// popSlow is pop when at most one private job is left (that one, else the newest public
// job), the public part is empty or a thief took a job (the other private jobs are
// published).
func (q *workQueue) popSlow() *task {
	if q.n == 0 {
		t := q.pub.pop()
		q.bottom = q.pub.bottom.Load()
		q.seen = q.top.Load()
		return t
	}
	q.n--
	t := q.priv[q.n]
	q.priv[q.n] = nil
	if top := q.top.Load(); top >= q.bottom || top != q.seen {
		q.expose()
	}
	return t
}

// expose publishes every private job (the worker only).
func (q *workQueue) expose() {
	q.seen = q.top.Load()
	if q.n == 0 {
		return
	}
	q.pub.pushAll(q.priv[:q.n])
	clear(q.priv[:q.n])
	q.bottom += int64(q.n)
	q.n = 0
}

// steal takes the oldest public job (any goroutine), or nil.
func (q *workQueue) steal() *task { return q.pub.steal() }
